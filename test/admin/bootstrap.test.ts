import { pino } from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { bootstrap } from "../../src/admin/bootstrap.js";
import { createRootKey, listRootKeys, revokeRootKey } from "../../src/admin/commands.js";
import { InvalidationBus } from "../../src/cache/bus.js";
import { hashKey } from "../../src/domain/key-material.js";
import { ENVIRONMENT_ROOT_KEY_ID } from "../../src/services/environment-root-key.js";
import { TestClock } from "../harness/clock.js";
import { createTestDatabase, type TestDatabase } from "../harness/database.js";
import { currentEngine } from "../harness/engine.js";

const log = pino({ level: "silent" });
let database: TestDatabase | undefined;
afterEach(async () => {
  await database?.drop();
  database = undefined;
});

async function fresh() {
  database = await createTestDatabase(currentEngine());
  return { db: database.db, bus: new InvalidationBus("node_test"), clock: new TestClock() };
}

type Deps = Awaited<ReturnType<typeof fresh>>;

/** Every text of the root key rows, for "no part of the secret is stored". */
async function rootKeyText(deps: Deps): Promise<string> {
  const rows = await deps.db.query<{ t: string }>(
    "select concat_ws(' ', id, hash, start, name) as t from root_keys",
  );
  return rows.map((r) => r.t).join("\n");
}

/** A root key row as versions before this one stored the environment's ROOT_KEY. */
async function legacyRow(deps: Deps, secret: string, opts: { revoked?: boolean } = {}) {
  const ws = await deps.db.query<{ id: string }>("select id from workspaces where is_default");
  const id = `rk_legacy${Math.random().toString(36).slice(2, 10)}`;
  await deps.db.query(
    `insert into root_keys (id, workspace_id, hash, start, name, permissions, created_at, revoked_at)
     values ($1, $2, $3, $4, 'ROOT_KEY', '{*.*.*}', 1, $5)`,
    [id, ws[0]?.id, hashKey(secret), secret.slice(0, 4), opts.revoked ? 2 : null],
  );
  await deps.db.query(
    `insert into audit_logs (workspace_id, time, event, actor_type, actor_id, resource_type,
       resource_id, description)
     values ($1, 1, 'rootKey.create', 'system', 'bootstrap', 'rootKey', $2, 'Created.')`,
    [ws[0]?.id, id],
  );
  return id;
}

describe("bootstrap with ROOT_KEY", () => {
  it("stores nothing of it: no row, no start, no hash; it acts from memory with *.*.*", async () => {
    const deps = await fresh();
    const secret = "my_root_key_0123456789";
    const first = await bootstrap(deps, secret, log);
    const again = await bootstrap(deps, secret, log);
    expect(await deps.db.query("select 1 from root_keys")).toEqual([]);
    expect(await deps.db.query("select 1 from audit_logs")).toEqual([]);
    const ws = await deps.db.query<{ id: string }>("select id from workspaces where is_default");
    for (const b of [first, again]) {
      expect(b.createdSecret).toBeUndefined();
      expect(b.environmentRootKey?.principal).toEqual({
        rootKeyId: ENVIRONMENT_ROOT_KEY_ID,
        workspaceId: ws[0]?.id,
        permissions: ["*.*.*"],
      });
    }
    // Not even a first-start key: ROOT_KEY is the way in.
    expect(await listRootKeys(deps)).toEqual([]);
  });

  it("retires the row an earlier version stored for it, and the one of an earlier ROOT_KEY", async () => {
    const deps = await fresh();
    await bootstrap(deps, undefined, log);
    await deps.db.query("delete from root_keys");
    const secret = "my_root_key_0123456789";
    const current = await legacyRow(deps, secret);
    const earlier = await legacyRow(deps, "an_earlier_root_key_987654");
    const cli = await createRootKey(deps, (await defaultWs(deps)) as string, ["*.*.*"], "ROOT_KEY");

    const b = await bootstrap(deps, secret, log);
    expect(b.environmentRootKey).toBeDefined();
    const rows = await listRootKeys(deps);
    const byId = new Map(rows.map((r) => [r.id, r]));
    for (const id of [current, earlier]) {
      expect(byId.get(id)?.revokedAt, id).not.toBeNull();
      expect(byId.get(id)?.start, id).toBe("");
      expect(byId.get(id)?.hash, id).toBe(`retired:${id}`);
    }
    // A key an operator made and happened to name ROOT_KEY is theirs: left alone.
    expect(byId.get(cli.id)?.revokedAt).toBeNull();
    expect(await rootKeyText(deps)).not.toContain(hashKey(secret));
    expect(await rootKeyText(deps)).not.toContain(secret.slice(0, 4));
    const audit = await deps.db.query<{ resource_id: string }>(
      "select resource_id from audit_logs where event = 'rootKey.revoke' order by resource_id",
    );
    expect(audit.map((a) => a.resource_id)).toEqual([current, earlier].sort());
    // Idempotent: a second start changes nothing more.
    await bootstrap(deps, secret, log);
    expect(await listRootKeys(deps)).toEqual(rows);
  });

  it("keeps refusing a ROOT_KEY whose row an operator revoked", async () => {
    const deps = await fresh();
    await bootstrap(deps, undefined, log);
    await deps.db.query("delete from root_keys");
    const secret = "my_root_key_0123456789";
    const id = await legacyRow(deps, secret, { revoked: true });
    const b = await bootstrap(deps, secret, log);
    expect(b.environmentRootKey).toBeUndefined();
    const [row] = await listRootKeys(deps);
    expect(row).toMatchObject({ id, start: "", revokedAt: 2 });
  });

  it("cannot be revoked through the CLI: it has no row", async () => {
    const deps = await fresh();
    await bootstrap(deps, "my_root_key_0123456789", log);
    await expect(revokeRootKey(deps, ENVIRONMENT_ROOT_KEY_ID)).rejects.toThrow(/ROOT_KEY/);
  });
});

describe("bootstrap without ROOT_KEY", () => {
  it("creates one root key on the first start only", async () => {
    const deps = await fresh();
    const first = await bootstrap(deps, undefined, log);
    expect(first.createdSecret).toMatch(/^root_[1-9A-HJ-NP-Za-km-z]+$/);
    expect(first.environmentRootKey).toBeUndefined();
    expect(await bootstrap(deps, undefined, log)).toEqual({});
    const rows = await deps.db.query<{ hash: string }>("select hash from root_keys");
    expect(rows).toEqual([{ hash: hashKey(first.createdSecret as string) }]);
  });

  it("hands the secret to its keeper before committing: a keeper that fails stores no key", async () => {
    const deps = await fresh();
    await expect(
      bootstrap(deps, undefined, log, async () => {
        throw new Error("disk full");
      }),
    ).rejects.toThrow("disk full");
    expect(await deps.db.query("select 1 from root_keys")).toEqual([]);
    let kept: string | undefined;
    const b = await bootstrap(deps, undefined, log, async (secret) => {
      kept = secret;
    });
    expect(kept).toBe(b.createdSecret);
    expect(await deps.db.query("select 1 from root_keys")).toHaveLength(1);
  });

  it("is safe when several processes start at once: one workspace, one root key", async () => {
    const deps = await fresh();
    const results = await Promise.all(
      Array.from({ length: 6 }, () => bootstrap(deps, undefined, log)),
    );
    expect(results.filter((r) => r.createdSecret !== undefined)).toHaveLength(1);
    expect(await deps.db.query("select 1 from workspaces")).toHaveLength(1);
    expect(await deps.db.query("select 1 from root_keys")).toHaveLength(1);
  });
});

async function defaultWs(deps: Deps): Promise<string | undefined> {
  const ws = await deps.db.query<{ id: string }>("select id from workspaces where is_default");
  return ws[0]?.id;
}
