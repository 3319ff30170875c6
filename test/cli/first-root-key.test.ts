import { existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { type App, startApp } from "../../src/app.js";
import { describeFailure } from "../../src/cli/failure.js";
import { loadConfig } from "../../src/config.js";
import { capturedLogger, scratchDirs, TEST_START_ENV } from "./in-process.js";

// Where a first start puts its root key, started in this process: its stdout is not a
// terminal, as under a service manager. The terminal, and the file's mode as the built bin
// leaves it, are checked on a real process in bin.test.ts.

const dataDir = scratchDirs("latchkey-first-");

const SECRET = /root_[1-9A-HJ-NP-Za-km-z]{20,}/;

/** Starts Latchkey with `env`, runs `check`, stops it; resolves with what it logged. */
async function served(env: Record<string, string>, check: (app: App) => Promise<void>) {
  const { log, lines } = capturedLogger();
  const config = loadConfig({ ...TEST_START_ENV, ...env });
  const app = await startApp({ config, log });
  try {
    await check(app);
  } finally {
    await app.stop();
  }
  return lines();
}

async function createApi(app: App, key: string): Promise<number> {
  const res = await fetch(`${app.url}/v2/apis.createApi`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
    body: JSON.stringify({ name: "with the first key" }),
  });
  return res.status;
}

describe("the first root key", () => {
  it("goes to BOOTSTRAP_ROOT_KEY_FILE when set, replacing what was there, mode 0600", async () => {
    const file = join(dataDir(), "keys", "latchkey-root");
    mkdirSync(dirname(file));
    writeFileSync(file, "an old key\n", { mode: 0o644 });
    const logged = await served(
      { DATA_DIR: dataDir(), BOOTSTRAP_ROOT_KEY_FILE: file },
      async (app) => {
        expect(readFileSync(file, "utf8")).toMatch(new RegExp(`^${SECRET.source}\n$`));
        expect(statSync(file).mode & 0o777).toBe(0o600);
        expect(await createApi(app, readFileSync(file, "utf8").trim())).toBe(200);
      },
    );
    expect(logged).toContain(`"file":"${file}"`);
    expect(logged).not.toMatch(SECRET);
  });

  it("a file that cannot be written stops the start and stores no key; the next start makes one, the one after none", async () => {
    const data = dataDir();
    const blocker = join(data, "not-a-directory");
    writeFileSync(blocker, "");
    const { log, lines } = capturedLogger();
    const config = loadConfig({
      ...TEST_START_ENV,
      DATA_DIR: data,
      BOOTSTRAP_ROOT_KEY_FILE: join(blocker, "key"),
    });
    const failed = await startApp({ config, log }).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(describeFailure(failed)).toEqual({
      text: expect.stringMatching(/^latchkey: cannot write the first root key to [^\n]+$/),
      exitCode: 1,
    });
    expect(lines()).not.toMatch(SECRET);

    // Nothing was stored: the next start still creates the first key.
    const file = join(data, "first-root-key");
    await served({ DATA_DIR: data }, async () => {
      expect(readFileSync(file, "utf8")).toMatch(SECRET);
    });
    // The one after creates nothing, so it writes nothing.
    rmSync(file);
    const logged = await served({ DATA_DIR: data }, async () => {});
    expect(existsSync(file)).toBe(false);
    expect(logged).not.toContain("first root key");
  });

  it("with ROOT_KEY: no key is created, no file written", async () => {
    const data = dataDir();
    await served({ DATA_DIR: data, ROOT_KEY: "my_own_root_key_0123456789" }, async (app) => {
      expect(await createApi(app, "my_own_root_key_0123456789")).toBe(200);
    });
    expect(existsSync(join(data, "first-root-key"))).toBe(false);
  });
});
