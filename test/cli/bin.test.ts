import { spawn, spawnSync } from "node:child_process";
import { existsSync, readFileSync, statSync } from "node:fs";
import net from "node:net";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { openPglite } from "../../src/storage/pglite.js";
import { CLI, latchkey, startLatchkey } from "./bin.js";
import { scratchDirs, TEST_START_ENV } from "./in-process.js";

// What needs a real process: the built bin, its exit codes, signals, a terminal, and the
// files a start leaves. Parsing, help and refusals run in process (test/unit/cli/).

const VERSION = JSON.parse(
  readFileSync(new URL("../../package.json", import.meta.url), "utf8"),
).version;
const SECRET = /root_[1-9A-HJ-NP-Za-km-z]{20,}/;

const dataDir = scratchDirs("latchkey-bin-");

async function call(port: number | undefined, procedure: string, body: unknown, key?: string) {
  const res = await fetch(`http://127.0.0.1:${port}/v2/${procedure}`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      ...(key ? { authorization: `Bearer ${key}` } : {}),
    },
    body: JSON.stringify(body),
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { data: Record<string, string> }).data;
}

describe("the built latchkey bin", { timeout: 300_000 }, () => {
  it("prints its version, and exits 2 with one line on an unknown command", () => {
    expect(latchkey(["--version"])).toMatchObject({ code: 0, stdout: `${VERSION}\n` });
    const r = latchkey(["frobnicate"]);
    expect(r).toMatchObject({ code: 2, stdout: "" });
    expect(r.stderr).toBe("latchkey: unknown command 'frobnicate' (latchkey --help lists them)\n");
  });

  it("a port in use: exit 1, one line naming it", async () => {
    const taken = net.createServer();
    await new Promise<void>((r) => taken.listen(0, "127.0.0.1", () => r()));
    try {
      const port = String((taken.address() as net.AddressInfo).port);
      const r = latchkey(["serve", "--port", port], { ...TEST_START_ENV, DATA_DIR: dataDir() });
      expect(r.code).toBe(1);
      expect(r.stderr.trimEnd().split("\n")).toEqual([
        expect.stringMatching(/^latchkey: .*EADDRINUSE.*:\d+/),
      ]);
    } finally {
      await new Promise((r) => taken.close(r));
    }
  });

  it("a first start: flags beat the environment, the root key goes to a 0600 file, DATA_DIR is its own, and SIGTERM keeps every answered verification even with its reader gone", async () => {
    const data = dataDir();
    const file = join(data, "first-root-key");
    // The environment names a port, level and directory that would fail; the flags win.
    const serving = startLatchkey(
      ["serve", "--port", "0", "--grpc-port", "off", "--log-level", "info", "--data-dir", data],
      {
        PORT: "1",
        GRPC_PORT: "1",
        LOG_LEVEL: "nonsense",
        DATA_DIR: "/dev/null/latchkey-not-here",
        HOST: "127.0.0.1",
      },
    );
    try {
      expect(await serving.listening(), serving.stderr()).toBe(true);
      expect(serving.port()).toBeGreaterThan(1);
      expect(serving.stdout()).toContain('"engine":"pglite"');
      expect(serving.stdout()).not.toContain('"grpcPort"');

      // Not a terminal: the secret is in a file only its owner reads, whose path is logged.
      expect(serving.stdout() + serving.stderr()).not.toMatch(SECRET);
      expect(serving.stdout()).toContain(`"file":"${file}"`);
      expect(statSync(file).mode & 0o777).toBe(0o600);
      const rootKey = readFileSync(file, "utf8").trim();
      expect(rootKey).toMatch(SECRET);

      // PGlite is one process's database: a second one is refused, naming the holder.
      const busy = latchkey(["root-key", "list"], { DATA_DIR: data });
      expect(busy.code).toBe(2);
      expect(busy.stderr).toMatch(/^latchkey: DATA_DIR \S+ is in use by process \d+;/);

      const { apiId } = await call(serving.port(), "apis.createApi", { name: "bin" }, rootKey);
      const { key, keyId } = await call(serving.port(), "keys.createKey", { apiId }, rootKey);
      let answered = 0;
      await Promise.all(
        Array.from({ length: 10 }, async () => {
          for (let i = 0; i < 30; i++) {
            const v = await call(serving.port(), "keys.verifyKey", { key, tags: ["stop"] });
            if (v.code === "VALID") answered++;
          }
        }),
      );
      expect(answered).toBe(300);

      // The reader goes away: every later write to stdout is a broken pipe.
      serving.child.stdout.destroy();
      expect(await serving.stop()).toBe(0);

      // The batches commit without waiting for the WAL; a clean stop still writes them all.
      const db = await openPglite({ dataDir: data });
      try {
        const [raw] = await db.query<{ n: number }>(
          "select count(*)::int as n from key_verifications where key_id = $1",
          [keyId],
        );
        const [minute] = await db.query<{ n: number }>(
          "select sum(count)::int as n from verifications_per_minute where key_id = $1",
          [keyId],
        );
        expect([raw?.n, minute?.n]).toEqual([300, 300]);
      } finally {
        await db.close();
      }
    } finally {
      await serving.stop();
    }
  });

  it.skipIf(spawnSync("script", ["--version"]).status !== 0)(
    "a first start on a terminal prints the root key there once, and writes no file",
    async () => {
      const data = dataDir();
      // script(1) gives the server a pseudo-terminal as stdout, as a person's shell would.
      const child = spawn("script", ["-qec", `'${process.execPath}' '${CLI}' serve`, "/dev/null"], {
        env: { PATH: process.env.PATH ?? "", ...TEST_START_ENV, DATA_DIR: data },
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
        expect(out.split(key)).toHaveLength(2);
        expect(existsSync(join(data, "first-root-key"))).toBe(false);
        const port = Number(/"port":(\d+)/.exec(out)?.[1]);
        expect(await call(port, "apis.createApi", { name: "terminal" }, key)).toHaveProperty(
          "apiId",
        );
      } finally {
        const pid = Number(/"pid":(\d+)/.exec(out)?.[1]);
        if (pid) process.kill(pid, "SIGTERM");
        else child.kill("SIGKILL");
        await exited;
      }
    },
  );
});
