import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hashKey } from "../../src/domain/key-material.js";
import { createTestDatabase, type TestDatabase } from "../harness/database.js";
import { currentEngine } from "../harness/engine.js";
import { cli } from "./in-process.js";

const engine = currentEngine();
let dir: string;
let database: TestDatabase | undefined;

/** Runs an admin command on this run's engine: a PGlite DATA_DIR, or a fresh database. */
async function latchkey(...args: string[]) {
  const target: Record<string, string> = database?.url
    ? { DATABASE_URL: database.url }
    : { DATA_DIR: dir };
  const r = await cli(args, { LOG_LEVEL: "warn", ...target });
  return { code: r.code, stdout: r.stdout.trim(), stderr: r.stderr.trim() };
}

// The admin commands talk to the database directly and need no server; they run in this
// process (the bin itself is run in bin.test.ts), on each engine.
describe(`the admin commands on ${engine}`, () => {
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "latchkey-cli-"));
    if (engine === "postgres") database = await createTestDatabase("postgres");
  });
  afterAll(async () => {
    rmSync(dir, { recursive: true, force: true });
    await database?.drop();
  });

  it("migrate applies the migrations", async () => {
    const r = await latchkey("migrate");
    expect(r.code, r.stderr).toBe(0);
    // A fresh PostgreSQL database of the tests comes migrated from its template.
    expect(r.stdout).toMatch(
      engine === "pglite" ? /^applied migrations 1(, \d+)*$/ : /^database is up to date$/,
    );
  });

  it("creates a workspace, a root key, lists and revokes it", async () => {
    const ws = await latchkey("workspace", "create", "--name", "acme");
    expect(ws.code).toBe(0);
    expect(ws.stdout).toMatch(/^ws_[a-zA-Z0-9]+$/);

    const key = await latchkey(
      ...["root-key", "create", "--workspace", ws.stdout],
      ...["--permission", "api.*.read_api", "--permission", "api.*.create_api", "--name", "ci"],
    );
    expect(key.code, key.stderr).toBe(0);
    expect(key.stdout).toMatch(/^root_[1-9A-HJ-NP-Za-km-z]+$/);
    const id = /^created root key (rk_\w+); the secret below is shown only once$/.exec(
      key.stderr,
    )?.[1] as string;
    expect(id).toBeDefined();

    // Every wildcard the server matches is grantable.
    const granted =
      "api.*.*,*.*.read_api,api.api_1.*,identity.id_1.read_identity,ratelimit.*.limit";
    const wild = await latchkey(
      ...["root-key", "create", "--workspace", ws.stdout, "--permissions", granted],
    );
    expect(wild.code, wild.stderr).toBe(0);

    const list = await latchkey("root-key", "list", "--workspace", ws.stdout);
    expect(list.code).toBe(0);
    const [header, ...rows] = list.stdout.split("\n");
    expect(header).toBe("id\tname\tworkspace\tcreated\tstate\tpermissions");
    expect(rows).toHaveLength(2);
    expect(rows.find((r) => r.startsWith(`${id}\t`))).toMatch(
      new RegExp(
        `^${id}\tci\t${ws.stdout}\t\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\dZ\tlive\tapi\\.\\*\\.read_api,api\\.\\*\\.create_api$`,
      ),
    );
    expect(
      rows
        .find((r) => !r.startsWith(`${id}\t`))
        ?.split("\t")
        .slice(4),
    ).toEqual(["live", granted]);
    // Never the secret, its start or its hash.
    expect(list.stdout).not.toContain(key.stdout.slice(0, 9));
    expect(list.stdout).not.toContain(hashKey(key.stdout));

    const workspaces = await latchkey("workspace", "list");
    expect(workspaces.code).toBe(0);
    expect(workspaces.stdout.split("\n")[0]).toBe("id\tname\tcreated\tdefault");
    expect(workspaces.stdout).toMatch(new RegExp(`^${ws.stdout}\tacme\t\\S+Z\t-$`, "m"));

    expect(await latchkey("root-key", "revoke", id)).toMatchObject({
      code: 0,
      stdout: `revoked ${id}`,
    });
    expect((await latchkey("root-key", "list", "--workspace", ws.stdout)).stdout).toMatch(
      /\trevoked\t/,
    );
    const again = await latchkey("root-key", "revoke", id);
    expect(again).toEqual({ code: 2, stdout: "", stderr: `latchkey: no live root key ${id}` });
  });

  it("refuses a root key in a workspace that does not exist", async () => {
    const r = await latchkey("root-key", "create", "--workspace", "ws_nope", "--all");
    expect(r).toEqual({
      code: 2,
      stdout: "",
      stderr: "latchkey: workspace ws_nope does not exist",
    });
  });
});
