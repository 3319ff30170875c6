import postgres from "postgres";
import { describe, expect, it } from "vitest";
import { RefillInterval } from "../../../../gen/latchkey/v2/common_pb.js";
import { CreditsOperation, VerifyKeyCode } from "../../../../gen/latchkey/v2/keys_pb.js";
import { keyInWorkspace } from "../../../../src/cache/caches.js";
import { hashKey } from "../../../../src/domain/key-material.js";
import { currentEngine } from "../../../harness/engine.js";
import { type TestServer, useServer } from "../../../harness/server.js";
import { HOUR, verifierOf, verifyWith } from "./calls.js";

// keys.verifyKey spends a key's credits: the cost asked (1 by default), after a refill that is
// due, from the balance a rerolled key shares with its successor. After a spend, this node's
// cached record shows the balance the spend read, so answers that spend nothing report a
// current balance. The cached record is replaced, never changed in place, and only while the
// cache still holds what the verification read: a change that commits while a spend is in
// flight is never undone by the spend.

const s = useServer();
const verify = verifierOf(s);

const remainingOf = async (keyId: string) =>
  (await s.api.keys.getKey({ keyId })).data?.credits?.remaining;

/** A successor of the key through keys.rerollKey; the old key keeps working for an hour. */
async function reroll(keyId: string) {
  const res = await s.api.keys.rerollKey({ keyId, expiration: BigInt(HOUR) });
  if (!res.data) expect.fail("keys.rerollKey answered without data");
  return res.data;
}

describe("keys.verifyKey credits", () => {
  it("spends 1 by default and the cost given; cost 0 passes without spending, even at 0", async () => {
    const k = await s.seed.key({ credits: { remaining: 3 } });
    expect((await verify({ key: k.key })).credits).toBe(2n);
    expect((await verify({ key: k.key, credits: { cost: 2n } })).credits).toBe(0n);
    const free = await verify({ key: k.key, credits: { cost: 0n } });
    expect(free).toMatchObject({ code: VerifyKeyCode.VALID, credits: 0n });
  });

  it("refills lazily at the boundary before spending", async () => {
    s.clock.set(Date.parse("2026-09-01T12:00:00Z"));
    const k = await s.seed.key({
      credits: { remaining: 1, refill: { interval: "daily", amount: 5 } },
    });
    expect((await verify({ key: k.key })).credits).toBe(0n);
    expect((await verify({ key: k.key })).code).toBe(VerifyKeyCode.USAGE_EXCEEDED);
    s.clock.set(Date.parse("2026-09-02T00:00:00Z"));
    expect(await verify({ key: k.key })).toMatchObject({ code: VerifyKeyCode.VALID, credits: 4n });
    expect(await remainingOf(k.keyId)).toBe(4n);
    const got = await s.api.keys.getKey({ keyId: k.keyId });
    expect(got.data?.credits?.refill).toMatchObject({ interval: RefillInterval.DAILY, amount: 5n });
  });

  it("spends a rerolled key's shared balance from both keys", async () => {
    const k = await s.seed.key({ credits: { remaining: 2 } });
    const fresh = await reroll(k.keyId);
    expect((await verify({ key: k.key })).credits).toBe(1n);
    expect((await verify({ key: fresh.key })).credits).toBe(0n);
    expect((await verify({ key: k.key })).code).toBe(VerifyKeyCode.USAGE_EXCEEDED);
  });

  // The next three verify the old key first, so that its record (which names the key it
  // spends from, with that key's balance) is cached when the balance moves or changes.

  it("a rerolled key follows its balance through a second reroll", async () => {
    const k0 = await s.seed.key({ credits: { remaining: 5 } });
    const k1 = await reroll(k0.keyId);
    expect((await verify({ key: k0.key })).credits).toBe(4n);
    const k2 = await reroll(k1.keyId);
    expect(await verify({ key: k0.key })).toMatchObject({ code: VerifyKeyCode.VALID, credits: 3n });
    expect(await remainingOf(k2.keyId)).toBe(3n);
  });

  it("a rerolled key spends a balance its successor was given after it was cached", async () => {
    const k0 = await s.seed.key();
    const k1 = await reroll(k0.keyId);
    expect((await verify({ key: k0.key })).credits).toBeUndefined();
    await s.api.keys.updateCredits({ keyId: k1.keyId, operation: CreditsOperation.SET, value: 1n });
    expect(await verify({ key: k0.key })).toMatchObject({ code: VerifyKeyCode.VALID, credits: 0n });
    expect((await verify({ key: k0.key })).code).toBe(VerifyKeyCode.USAGE_EXCEEDED);
    expect(await remainingOf(k1.keyId)).toBe(0n);
  });

  it("a rerolled key keeps a copy of the balance when its successor is deleted for good", async () => {
    const k0 = await s.seed.key({ credits: { remaining: 3 } });
    const k1 = await reroll(k0.keyId);
    expect((await verify({ key: k0.key })).credits).toBe(2n);
    await s.api.keys.deleteKey({ keyId: k1.keyId, permanent: true });
    expect(await verify({ key: k0.key })).toMatchObject({ code: VerifyKeyCode.VALID, credits: 1n });
    expect(await remainingOf(k0.keyId)).toBe(1n);
  });
});

/** A verification with the default root key that spends `cost` credits. */
const spend = (key: string, cost: number) =>
  verifyWith(s.api, { key, credits: { cost: BigInt(cost) } });

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

describe("keys.verifyKey: the balance reported after spends on the same node", () => {
  it("comes from a new cached record: the record concurrent verifications hold never changes", async () => {
    const k = await s.seed.key({
      credits: { remaining: 10, refill: { interval: "daily", amount: 10 } },
    });
    expect((await spend(k.key, 0)).credits).toBe(10n);
    // The entry a verification with the root key (and no apiId) reads.
    const entry = keyInWorkspace(s.workspaceId, hashKey(k.key));
    const held = s.app.deps.caches.keys.get(entry);
    expect(held).toMatchObject({ id: k.keyId, remaining: 10 });
    const before = structuredClone(held);
    expect((await spend(k.key, 3)).credits).toBe(7n);
    expect(held).toEqual(before);
    expect(s.app.deps.caches.keys.get(entry)).toMatchObject({ id: k.keyId, remaining: 7 });
    expect((await spend(k.key, 0)).credits).toBe(7n);
  });

  it("is the newest one after concurrent spends, not the first one back", async () => {
    const k = await s.seed.key({ credits: { remaining: 100 } });
    expect((await spend(k.key, 0)).credits).toBe(100n); // cached
    const spends = await Promise.all(Array.from({ length: 12 }, () => spend(k.key, 1)));
    expect(spends.every((d) => d.code === VerifyKeyCode.VALID)).toBe(true);
    expect(Math.min(...spends.map((d) => Number(d.credits)))).toBe(88);
    expect((await spend(k.key, 0)).credits).toBe(88n);
    expect((await spend(k.key, 100)).code).toBe(VerifyKeyCode.USAGE_EXCEEDED);
    expect((await spend(k.key, 0)).credits).toBe(88n);
  });

  it.skipIf(currentEngine() !== "postgres")(
    "never undoes a change that committed while the spend was in flight",
    async () => {
      const { externalId } = await s.seed.identity();
      const k = await s.seed.key({ credits: { remaining: 10 }, externalId });
      expect((await spend(k.key, 0)).ratelimits).toEqual([]); // the record is cached
      const release = await lockKeyRow(s, k.keyId);
      let pending: ReturnType<typeof spend> | undefined;
      try {
        pending = spend(k.key, 1);
        await until(async () => (await spendsWaiting(s)) === 1, "the spend to wait");
        // Meanwhile the identity gains a limit: the cached record is dropped, then loaded again.
        await s.api.identities.updateIdentity({
          identity: externalId,
          ratelimits: [{ name: "burst", limit: 1000n, duration: 60_000n, autoApply: true }],
        });
        const seen = await spend(k.key, 0);
        expect(seen.ratelimits.map((r) => r.name)).toEqual(["burst"]);
      } finally {
        await release();
      }
      expect(await pending).toMatchObject({ code: VerifyKeyCode.VALID, credits: 9n });
      const after = await spend(k.key, 0);
      expect(after.ratelimits.map((r) => r.name)).toEqual(["burst"]);
    },
  );
});
