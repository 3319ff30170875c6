import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hashKey } from "../../src/domain/key-material.js";
import { openPglite } from "../../src/storage/pglite.js";
import { createTestDatabase, type TestDatabase } from "../harness/database.js";
import { currentEngine } from "../harness/engine.js";

const CLI = fileURLToPath(new URL("../../dist/src/cli/main.js", import.meta.url));
const engine = currentEngine();
let dir: string;
let database: TestDatabase | undefined;

/** Runs the CLI on this run's engine: a PGlite DATA_DIR, or a fresh PostgreSQL database. */
function latchkey(...args: string[]) {
  const target = database?.url ? { DATABASE_URL: database.url } : { DATA_DIR: dir };
  const r = spawnSync(process.execPath, [CLI, ...args], {
    env: { PATH: process.env.PATH ?? "", LOG_LEVEL: "warn", ...target },
    encoding: "utf8",
    timeout: 60_000,
  });
  return { code: r.status, stdout: r.stdout.trim(), stderr: r.stderr.trim() };
}

// The CLI talks to the database directly; it needs no running server.
describe(`the latchkey CLI on ${engine}`, { timeout: 300_000 }, () => {
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "latchkey-cli-"));
    if (engine === "postgres") database = await createTestDatabase("postgres");
  });
  afterAll(async () => {
    rmSync(dir, { recursive: true, force: true });
    await database?.drop();
  });

  it("creates a workspace, a root key, lists and revokes it", () => {
    const ws = latchkey("workspace", "create", "--name", "acme");
    expect(ws.code).toBe(0);
    expect(ws.stdout).toMatch(/^ws_[a-zA-Z0-9]+$/);

    const key = latchkey(
      "root-key",
      "create",
      "--workspace",
      ws.stdout,
      "--permission",
      "api.*.read_api",
      "--permission",
      "api.*.create_api",
      "--name",
      "ci",
    );
    expect(key.code).toBe(0);
    expect(key.stdout).toMatch(/^root_[1-9A-HJ-NP-Za-km-z]+$/);
    const id = /created root key (rk_\w+)/.exec(key.stderr)?.[1] as string;
    expect(id).toBeDefined();

    const list = latchkey("root-key", "list", "--workspace", ws.stdout);
    expect(list.code).toBe(0);
    const [header, row, ...more] = list.stdout.split("\n");
    expect(header).toBe("id\tname\tworkspace\tcreated\tstate\tpermissions");
    expect(row).toMatch(
      new RegExp(
        `^${id}\tci\t${ws.stdout}\t\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\dZ\tlive\tapi\\.\\*\\.read_api,api\\.\\*\\.create_api$`,
      ),
    );
    expect(more).toEqual([]);
    // Never the secret, its start or its hash.
    expect(list.stdout).not.toContain(key.stdout.slice(0, 9));
    expect(list.stdout).not.toContain(hashKey(key.stdout));

    const workspaces = latchkey("workspace", "list");
    expect(workspaces.code).toBe(0);
    expect(workspaces.stdout.split("\n")[0]).toBe("id\tname\tcreated\tdefault");
    expect(workspaces.stdout).toMatch(new RegExp(`^${ws.stdout}\tacme\t\\S+Z\t-$`, "m"));

    expect(latchkey("root-key", "revoke", id).code).toBe(0);
    expect(latchkey("root-key", "list", "--workspace", ws.stdout).stdout).toMatch(/\trevoked\t/);
    const again = latchkey("root-key", "revoke", id);
    expect(again.code).toBe(2);
    expect(again.stderr).toContain("no live root key");
  });

  it.each([
    [["root-key", "create", "--workspace", "ws_nope", "--all"], /does not exist/],
    [
      ["root-key", "create", "--workspace", "ws_x", "--permission", "not-a-permission"],
      /resource.id.action/,
    ],
    [
      ["root-key", "create", "--workspace", "ws_x", "--permission", "api.*.read_ap"],
      /permission 'api\.\*\.read_ap' names no action the server checks; did you mean api\.\*\.read_api\?/,
    ],
    [
      [
        "root-key",
        "create",
        "--workspace",
        "ws_x",
        "--permissions",
        "api.*.read_api,apis.*.create_api",
      ],
      /'apis\.\*\.create_api' names no resource the server checks; did you mean api\.\*\.create_api\?/,
    ],
    [
      ["root-key", "create", "--workspace", "ws_x", "--permission", "rbac.role_1.create_role"],
      /rbac permissions are workspace-wide \(id \*\); did you mean rbac\.\*\.create_role\?/,
    ],
    [["root-key", "create", "--workspace", "ws_x"], /--permission P/],
    [["root-key", "create", "--all"], /--workspace is required/],
    [["frobnicate"], /unknown command/],
  ])("refuses %j with exit code 2 and a clear message", (args, message) => {
    const r = latchkey(...args);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message);
  });

  it("grants the wildcards the server matches", () => {
    const ws = latchkey("workspace", "create", "--name", "wildcards").stdout;
    const key = latchkey(
      ...["root-key", "create", "--workspace", ws, "--permissions"],
      "api.*.*,*.*.read_api,api.api_1.*,identity.id_1.read_identity,ratelimit.*.limit",
    );
    expect(key.code, key.stderr).toBe(0);
    expect(latchkey("root-key", "list", "--workspace", ws).stdout).toContain(
      "api.*.*,*.*.read_api,api.api_1.*,identity.id_1.read_identity,ratelimit.*.limit",
    );
  });

  it.skipIf(engine !== "pglite")(
    "serve creates a root key on the first start of an empty database, and refuses a second process on the same DATA_DIR",
    async () => {
      const data = mkdtempSync(join(tmpdir(), "latchkey-serve-"));
      const start = () =>
        spawn(process.execPath, [CLI, "serve"], {
          env: {
            PATH: process.env.PATH ?? "",
            DATA_DIR: data,
            PORT: "0",
            GRPC_PORT: "0",
            ADMIN_PORT: "0",
            HOST: "127.0.0.1",
            LOG_LEVEL: "info",
          },
          stdio: ["ignore", "pipe", "pipe"],
        });
      // Resolves once the process says it listens (or exits, or 3 minutes pass: a first
      // start on a loaded machine is slow).
      const run = async () => {
        const child = start();
        let out = "";
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, 180_000);
          child.once("exit", () => resolve());
          child.stdout.on("data", (c: Buffer) => {
            out += c;
            if (/latchkey listening/.test(out)) {
              clearTimeout(timer);
              resolve();
            }
          });
        });
        return { child, out: () => out };
      };
      try {
        const first = await run();
        // Not a terminal: the key is in the file the log names (first-root-key.test.ts).
        const key = readFileSync(join(data, "first-root-key"), "utf8").trim();
        expect(key).toMatch(/^root_/);
        const port = Number(/"port":(\d+)/.exec(first.out())?.[1]);
        const res = await fetch(`http://127.0.0.1:${port}/v2/apis.createApi`, {
          method: "POST",
          headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
          body: JSON.stringify({ name: "from the printed key" }),
        });
        expect(res.status).toBe(200);
        const busy = spawnSync(process.execPath, [CLI, "root-key", "list"], {
          env: { PATH: process.env.PATH ?? "", DATA_DIR: data },
          encoding: "utf8",
        });
        expect(busy.status).toBe(2);
        expect(busy.stderr).toMatch(/in use by process/);
        first.child.kill("SIGTERM");
        expect(await new Promise((r) => first.child.once("exit", r))).toBe(0);

        const second = await run();
        expect(second.out()).toMatch(/latchkey listening/);
        expect(second.out()).not.toMatch(/root_/);
        second.child.kill("SIGTERM");
        await new Promise((r) => second.child.once("exit", r));
      } finally {
        rmSync(data, { recursive: true, force: true });
      }
    },
  );

  it.skipIf(engine !== "pglite")(
    "serve exits cleanly on SIGTERM after the reader of its output has gone",
    async () => {
      const data = mkdtempSync(join(tmpdir(), "latchkey-serve-"));
      const child = spawn(process.execPath, [CLI, "serve"], {
        env: {
          PATH: process.env.PATH ?? "",
          DATA_DIR: data,
          PORT: "0",
          GRPC_PORT: "off",
          ADMIN_PORT: "0",
        },
        stdio: ["ignore", "pipe", "pipe"],
      });
      try {
        let out = "";
        await new Promise<void>((resolve) => {
          child.once("exit", () => resolve()); // a failed start fails below, not by timeout
          child.stdout.on("data", (c: Buffer) => {
            out += c;
            if (/latchkey listening/.test(out)) resolve();
          });
        });
        expect(out).toMatch(/latchkey listening/);
        // The reader goes away: every later write to stdout is a broken pipe.
        child.stdout.destroy();
        const exited = new Promise((r) => child.once("exit", (code, signal) => r(code ?? signal)));
        const t0 = performance.now();
        child.kill("SIGTERM");
        const code = await Promise.race([
          exited,
          new Promise((r) => setTimeout(() => r("still running after 30 s"), 30_000)),
        ]);
        console.log(`exited ${Math.round(performance.now() - t0)} ms after SIGTERM`);
        expect(code).toBe(0);
      } finally {
        child.kill("SIGKILL");
        rmSync(data, { recursive: true, force: true });
      }
    },
  );

  it.skipIf(engine !== "pglite")(
    "serve on PGlite has every answered verification in its data directory after SIGTERM",
    async () => {
      const data = mkdtempSync(join(tmpdir(), "latchkey-serve-"));
      const rootKey = "cli_test_root_key_0123456789";
      const child = spawn(process.execPath, [CLI, "serve"], {
        env: {
          PATH: process.env.PATH ?? "",
          DATA_DIR: data,
          PORT: "0",
          GRPC_PORT: "off",
          ADMIN_PORT: "0",
          HOST: "127.0.0.1",
          ROOT_KEY: rootKey,
          LOG_LEVEL: "info",
        },
        stdio: ["ignore", "pipe", "pipe"],
      });
      try {
        let out = "";
        await new Promise<void>((resolve) => {
          child.once("exit", () => resolve());
          child.stdout.on("data", (c: Buffer) => {
            out += c;
            if (/latchkey listening/.test(out)) resolve();
          });
        });
        const base = `http://127.0.0.1:${/"port":(\d+)/.exec(out)?.[1]}`;
        const call = async (procedure: string, body: unknown, auth = true) => {
          const res = await fetch(`${base}/v2/${procedure}`, {
            method: "POST",
            headers: {
              "content-type": "application/json",
              ...(auth ? { authorization: `Bearer ${rootKey}` } : {}),
            },
            body: JSON.stringify(body),
          });
          expect(res.status).toBe(200);
          return ((await res.json()) as { data: Record<string, string> }).data;
        };
        const { apiId } = await call("apis.createApi", { name: "events on stop" });
        const { key, keyId } = await call("keys.createKey", { apiId });
        let answered = 0;
        await Promise.all(
          Array.from({ length: 10 }, async () => {
            for (let i = 0; i < 30; i++) {
              const v = await call("keys.verifyKey", { key, tags: ["stop"] }, false);
              if (v.code === "VALID") answered++;
            }
          }),
        );
        const exited = new Promise((r) => child.once("exit", (code) => r(code)));
        child.kill("SIGTERM");
        expect(await exited).toBe(0);

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
          console.log(`${answered} answered, ${raw?.n} events in the data directory`);
          expect(answered).toBe(300);
          expect(raw?.n).toBe(300);
          expect(minute?.n).toBe(300);
        } finally {
          await db.close();
        }
      } finally {
        child.kill("SIGKILL");
        rmSync(data, { recursive: true, force: true });
      }
    },
  );
});
