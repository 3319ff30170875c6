import { pino } from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { bootstrap } from "../../src/admin/bootstrap.js";
import { InvalidationBus } from "../../src/cache/bus.js";
import { hashKey } from "../../src/domain/key-material.js";
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

describe("bootstrap", () => {
  it("makes sure ROOT_KEY exists with *.*.* in the default workspace, idempotently", async () => {
    const deps = await fresh();
    const secret = "my_root_key_0123456789";
    expect(await bootstrap(deps, secret, log)).toBeUndefined();
    expect(await bootstrap(deps, secret, log)).toBeUndefined();
    const rows = await deps.db.query<{ hash: string; permissions: string[]; is_default: boolean }>(
      `select r.hash, r.permissions, w.is_default
       from root_keys r join workspaces w on w.id = r.workspace_id`,
    );
    expect(rows).toEqual([{ hash: hashKey(secret), permissions: ["*.*.*"], is_default: true }]);
    const audit = await deps.db.query<{ event: string }>("select event from audit_logs");
    expect(audit).toEqual([{ event: "rootKey.create" }]);
  });

  it("creates one root key on the first start only, when no ROOT_KEY is given", async () => {
    const deps = await fresh();
    const first = await bootstrap(deps, undefined, log);
    expect(first).toMatch(/^root_[1-9A-HJ-NP-Za-km-z]+$/);
    expect(await bootstrap(deps, undefined, log)).toBeUndefined();
    const rows = await deps.db.query<{ hash: string }>("select hash from root_keys");
    expect(rows).toEqual([{ hash: hashKey(first as string) }]);
  });

  it("is safe when several processes start at once: one workspace, one root key", async () => {
    const deps = await fresh();
    const results = await Promise.all(
      Array.from({ length: 6 }, () => bootstrap(deps, undefined, log)),
    );
    expect(results.filter((r) => r !== undefined)).toHaveLength(1);
    expect(await deps.db.query("select 1 from workspaces")).toHaveLength(1);
    expect(await deps.db.query("select 1 from root_keys")).toHaveLength(1);
  });
});
