import { spawn, spawnSync } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { currentEngine } from "../harness/engine.js";
import { CLI, latchkey, type Serving, startLatchkey } from "./bin.js";

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function dataDir(): string {
  const d = mkdtempSync(join(tmpdir(), "latchkey-first-"));
  dirs.push(d);
  return d;
}

const BASE = {
  PORT: "0",
  GRPC_PORT: "off",
  ADMIN_PORT: "0",
  HOST: "127.0.0.1",
  LOG_LEVEL: "info",
};
const SECRET = /root_[1-9A-HJ-NP-Za-km-z]{20,}/;

async function createApi(port: number | undefined, key: string): Promise<number> {
  const res = await fetch(`http://127.0.0.1:${port}/v2/apis.createApi`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
    body: JSON.stringify({ name: "with the first key" }),
  });
  return res.status;
}

async function served(env: Record<string, string>, check: (s: Serving) => Promise<void>) {
  const serving = startLatchkey(["serve"], { ...BASE, ...env });
  try {
    expect(await serving.listening(), serving.stdout() + serving.stderr()).toBe(true);
    await check(serving);
    expect(await serving.stop()).toBe(0);
  } finally {
    await serving.stop();
  }
}

// The first start creates the same key on both engines; the files and terminals are the
// same too: these run on the PGlite project.
describe.skipIf(currentEngine() !== "pglite")("the first root key", { timeout: 300_000 }, () => {
  it("without a terminal: written to DATA_DIR/first-root-key (0600), its path logged, its secret nowhere in the output", async () => {
    const data = dataDir();
    const file = join(data, "first-root-key");
    await served({ DATA_DIR: data }, async (s) => {
      expect(s.stdout() + s.stderr()).not.toMatch(SECRET);
      expect(s.stdout()).toContain(`"file":"${file}"`);
      expect(statSync(file).mode & 0o777).toBe(0o600);
      const key = readFileSync(file, "utf8").trim();
      expect(key).toMatch(SECRET);
      expect(await createApi(s.port(), key)).toBe(200);
    });
    // The next start creates nothing, so it writes nothing.
    rmSync(file);
    await served({ DATA_DIR: data }, async (s) => {
      expect(existsSync(file)).toBe(false);
      expect(s.stdout()).not.toContain("first root key");
    });
  });

  it("goes to BOOTSTRAP_ROOT_KEY_FILE when set, replacing what was there", async () => {
    const file = join(dataDir(), "keys", "latchkey-root");
    mkdirSync(dirname(file));
    writeFileSync(file, "an old key\n", { mode: 0o644 });
    await served({ DATA_DIR: dataDir(), BOOTSTRAP_ROOT_KEY_FILE: file }, async (s) => {
      expect(readFileSync(file, "utf8")).toMatch(new RegExp(`^${SECRET.source}\n$`));
      expect(statSync(file).mode & 0o777).toBe(0o600);
      expect(s.stdout()).toContain(`"file":"${file}"`);
    });
  });

  it("a file that cannot be written stops the start and stores no key", async () => {
    const data = dataDir();
    const blocker = join(data, "not-a-directory");
    writeFileSync(blocker, "");
    const r = latchkey(["serve"], {
      ...BASE,
      DATA_DIR: data,
      BOOTSTRAP_ROOT_KEY_FILE: join(blocker, "key"),
    });
    expect(r.code).toBe(1);
    expect(r.stderr.trimEnd().split("\n")).toEqual([
      expect.stringContaining("latchkey: cannot write the first root key to"),
    ]);
    expect(r.stdout + r.stderr).not.toMatch(SECRET);
    // Nothing was stored: the next start still creates the first key.
    await served({ DATA_DIR: data }, async () => {
      expect(readFileSync(join(data, "first-root-key"), "utf8")).toMatch(SECRET);
    });
  });

  it("with ROOT_KEY: no key is created, no file written", async () => {
    const data = dataDir();
    await served({ DATA_DIR: data, ROOT_KEY: "my_own_root_key_0123456789" }, async (s) => {
      expect(await createApi(s.port(), "my_own_root_key_0123456789")).toBe(200);
    });
    expect(existsSync(join(data, "first-root-key"))).toBe(false);
  });

  it.skipIf(spawnSync("script", ["--version"]).status !== 0)(
    "on a terminal: printed there once, no file written",
    async () => {
      const data = dataDir();
      // script(1) gives the server a pseudo-terminal as stdout, as a person's shell would.
      const child = spawn("script", ["-qec", `'${process.execPath}' '${CLI}' serve`, "/dev/null"], {
        env: { PATH: process.env.PATH ?? "", ...BASE, DATA_DIR: data },
      });
      let out = "";
      child.stdout.on("data", (c: Buffer) => {
        out += c;
      });
      const exited = new Promise((r) => child.once("exit", r));
      try {
        const until = performance.now() + 180_000;
        while (
          !/latchkey listening/.test(out) &&
          performance.now() < until &&
          child.exitCode === null
        )
          await new Promise((r) => setTimeout(r, 25));
        expect(out).toMatch(/latchkey listening/);
        const key = SECRET.exec(out)?.[0] as string;
        expect(out).toContain(`It is shown only this once:\r\n\r\n  ${key}`);
        expect(existsSync(join(data, "first-root-key"))).toBe(false);
        const port = Number(/"port":(\d+)/.exec(out)?.[1]);
        expect(await createApi(port, key)).toBe(200);
      } finally {
        const pid = Number(/"pid":(\d+)/.exec(out)?.[1]);
        if (pid) process.kill(pid, "SIGTERM");
        else child.kill("SIGKILL");
        await exited;
      }
    },
  );
});
