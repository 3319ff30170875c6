import postgres from "postgres";
import { describe, expect, it } from "vitest";
import { keyInWorkspace } from "../../../src/cache/caches.js";
import { hashKey } from "../../../src/domain/key-material.js";
import { currentEngine } from "../../harness/engine.js";
import { type TestServer, useServer } from "../../harness/server.js";

// After a spend, this node's cached record shows the balance the spend read, so answers that
// spend nothing report a current balance. The cached record is replaced, never changed in
// place, and only while the cache still holds what the verification read: a change that
// commits while a spend is in flight is never undone by the spend.

const s = useServer();

/** A verification with the default root key that spends `cost` credits. */
async function verify(key: string, cost: number) {
  const res = await s.call("json", "keys.verifyKey", { key, credits: { cost } });
  expect(res.status).toBe(200);
  return res.data as { code: string; credits?: number; ratelimits?: { name: string }[] };
}

/** Polls `check` until it is true; fails after a generous deadline. */
async function until(check: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** Locks a key's row in a transaction of its own; the returned function rolls it back. */
async function lockKeyRow(t: TestServer, keyId: string): Promise<() => Promise<void>> {
  const sql = postgres(t.databaseUrl as string, { max: 1, onnotice: () => {} });
  const conn = await sql.reserve();
  await conn.unsafe("begin");
  await conn.unsafe("select id from keys where id = $1 for update", [keyId]);
  return async () => {
    await conn.unsafe("rollback");
    conn.release();
    await sql.end();
  };
}

/** Backends of the server's database waiting for a lock while spending credits. */
async function spendsWaiting(t: TestServer): Promise<number> {
  const rows = await t.db.query<{ n: number }>(
    `select count(*)::int as n from pg_stat_activity
     where datname = current_database() and wait_event_type = 'Lock'
       and query like '%with locked as%'`,
  );
  return rows[0]?.n ?? 0;
}

describe("the balance a verification reports after spends on the same node", () => {
  it("comes from a new cached record: the record concurrent verifications hold never changes", async () => {
    const k = await s.seed.key({
      credits: { remaining: 10, refill: { interval: "daily", amount: 10 } },
    });
    expect((await verify(k.key, 0)).credits).toBe(10);
    // The entry a verification with the root key (and no apiId) reads.
    const entry = keyInWorkspace(s.workspaceId, hashKey(k.key));
    const held = s.app.deps.caches.keys.get(entry);
    expect(held).toMatchObject({ id: k.keyId, remaining: 10 });
    const before = structuredClone(held);
    expect((await verify(k.key, 3)).credits).toBe(7);
    expect(held).toEqual(before);
    expect(s.app.deps.caches.keys.get(entry)).toMatchObject({ id: k.keyId, remaining: 7 });
    expect((await verify(k.key, 0)).credits).toBe(7);
  });

  it("is the newest one after concurrent spends, not the first one back", async () => {
    const k = await s.seed.key({ credits: { remaining: 100 } });
    expect((await verify(k.key, 0)).credits).toBe(100); // cached
    const spends = await Promise.all(Array.from({ length: 12 }, () => verify(k.key, 1)));
    expect(spends.every((d) => d.code === "VALID")).toBe(true);
    expect(Math.min(...spends.map((d) => d.credits as number))).toBe(88);
    expect((await verify(k.key, 0)).credits).toBe(88);
    expect((await verify(k.key, 100)).code).toBe("USAGE_EXCEEDED");
    expect((await verify(k.key, 0)).credits).toBe(88);
  });

  it.skipIf(currentEngine() !== "postgres")(
    "never undoes a change that committed while the spend was in flight",
    async () => {
      const { externalId } = await s.seed.identity();
      const k = await s.seed.key({ credits: { remaining: 10 }, externalId });
      expect((await verify(k.key, 0)).ratelimits ?? []).toEqual([]); // the record is cached
      const release = await lockKeyRow(s, k.keyId);
      let pending: ReturnType<typeof verify> | undefined;
      try {
        pending = verify(k.key, 1);
        await until(async () => (await spendsWaiting(s)) === 1, "the spend to wait");
        // Meanwhile the identity gains a limit: the cached record is dropped, then loaded again.
        const changed = await s.call("json", "identities.updateIdentity", {
          identity: externalId,
          ratelimits: [{ name: "burst", limit: 1000, duration: 60_000, autoApply: true }],
        });
        expect(changed.status).toBe(200);
        const seen = await verify(k.key, 0);
        expect(seen.ratelimits?.map((r) => r.name)).toEqual(["burst"]);
      } finally {
        await release();
      }
      expect(await pending).toMatchObject({ code: "VALID", credits: 9 });
      const after = await verify(k.key, 0);
      expect(after.ratelimits?.map((r) => r.name)).toEqual(["burst"]);
    },
  );
});
