import { createHash, randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { CreditsOperation } from "../../gen/latchkey/v2/keys_pb.js";
import { countOf, ROUNDS, together } from "../harness/race.js";
import { useServer } from "../harness/server.js";

// Concurrent writes that conflict end in a consistent state, and each caller gets a clean
// answer: 200, or 404/409 from the catalog, never a 5xx and never half of a change. Each race
// runs many rounds of calls started at once. The races cross namespaces (a key created for an
// identity or an API being deleted), so they live with the write path's other guarantees
// rather than with one procedure.

// Migrations of one workspace may run side by side here, so that two can race.
const s = useServer({ config: { migrateKeysMaxConcurrentPerWorkspace: 4 } });
const times = <T>(n: number, f: (i: number) => T): T[] => Array.from({ length: n }, (_, i) => f(i));
let n = 0;
const unique = (base: string) => `${base}_${++n}_${randomBytes(3).toString("hex")}`;

const count = async (sql: string, params: unknown[]) =>
  (await s.db.query<{ n: number }>(sql, params))[0]?.n;

describe("concurrent writes to identities", () => {
  it("updateIdentity calls adding the same rate limit all succeed, leaving one limit of that name", async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const identity = await s.seed.identity();
      const update = (i: number) => () =>
        s.api.identities.updateIdentity({
          identity: identity.id,
          ratelimits: [{ name: "requests", limit: BigInt(10 + i), duration: 60_000n }],
        });
      await together(times(3, update), [200]);
      const got = await s.api.identities.getIdentity({ identity: identity.id });
      expect(got.data?.ratelimits).toHaveLength(1);
      expect([10n, 11n, 12n]).toContain(got.data?.ratelimits[0]?.limit);
    }
  });

  it("updateIdentity racing deleteIdentity is 200 or 404, and a deleted identity keeps no rate limit", async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const identity = await s.seed.identity();
      const ratelimits = [{ name: "requests", limit: 5n, duration: 60_000n }];
      const [, remove] = await together(
        [
          () => s.api.identities.updateIdentity({ identity: identity.id, ratelimits }),
          () => s.api.identities.deleteIdentity({ identity: identity.id }),
        ],
        [200, 404],
      );
      expect(remove.status).toBe(200);
      const left = "select count(*)::int as n from ratelimits where identity_id = $1";
      expect(await count(left, [identity.id])).toBe(0);
    }
  });

  it("of concurrent createIdentity calls with one externalId exactly one succeeds, the others are 409", async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const externalId = unique("user");
      const create = () =>
        s.api.identities.createIdentity({
          externalId,
          ratelimits: [{ name: "requests", limit: 5n, duration: 60_000n }],
        });
      const results = await together([create, create, create], [200, 409]);
      expect(countOf(results, 200)).toBe(1);
      for (const r of results.filter((x) => x.status === 409)) {
        expect(r.errorCode).toBe("err:svc:data:identity_already_exists");
      }
      const rows = "select count(*)::int as n from identities where external_id = $1";
      expect(await count(rows, [externalId])).toBe(1);
    }
  });

  it("of two concurrent deleteIdentity calls one succeeds and the other is 404", async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const identity = await s.seed.identity();
      const remove = () => s.api.identities.deleteIdentity({ identity: identity.id });
      expect(countOf(await together([remove, remove], [200, 404]), 200)).toBe(1);
    }
  });

  it("createKey calls naming one new externalId all link their keys to one created identity", async () => {
    const apiId = await s.seed.api();
    for (let round = 0; round < ROUNDS; round++) {
      const externalId = unique("owner");
      const create = () => s.api.keys.createKey({ apiId, externalId });
      const results = await together([create, create, create], [200]);
      const linked = await s.db.query(
        "select distinct identity_id from keys where id = any($1::text[])",
        [results.map((r) => r.value?.data?.keyId)],
      );
      expect(linked).toHaveLength(1);
      const rows = "select count(*)::int as n from identities where external_id = $1";
      expect(await count(rows, [externalId])).toBe(1);
    }
  });

  it("createKey racing deleteIdentity of its externalId is 200 or 409, and only a 200 made a key", async () => {
    const apiId = await s.seed.api();
    for (let round = 0; round < ROUNDS; round++) {
      const identity = await s.seed.identity();
      const create = () => s.api.keys.createKey({ apiId, externalId: identity.externalId });
      const results = await together(
        [create, () => s.api.identities.deleteIdentity({ identity: identity.id }), create],
        [200, 409],
      );
      expect(results[1].status).toBe(200);
      const keys = "select count(*)::int as n from keys where identity_id = $1";
      expect(await count(keys, [identity.id])).toBe(countOf(results, 200) - 1);
    }
  });
});

describe("concurrent writes to keys", () => {
  it("updateKey calls setting the same rate limit all succeed, leaving one limit of that name", async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const { keyId } = await s.seed.key();
      const update = (i: number) => () =>
        s.api.keys.updateKey({
          keyId,
          ratelimits: [{ name: "requests", limit: BigInt(10 + i), duration: 60_000n }],
        });
      await together(times(3, update), [200]);
      const rows = "select count(*)::int as n from ratelimits where key_id = $1";
      expect(await count(rows, [keyId])).toBe(1);
    }
  });

  it("updateKey calls naming one new externalId converge on one identity", async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const keys = await Promise.all(times(3, () => s.seed.key()));
      const externalId = unique("shared");
      const link = (i: number) => () =>
        s.api.keys.updateKey({ keyId: keys[i]?.keyId as string, externalId });
      await together(times(3, link), [200]);
      const linked = await s.db.query(
        "select distinct identity_id from keys where id = any($1::text[])",
        [keys.map((k) => k.keyId)],
      );
      expect(linked).toHaveLength(1);
    }
  });

  it("createKey racing deleteApi is 200 or 404, and every 200 made a key", async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const apiId = await s.seed.api();
      const create = () => s.api.keys.createKey({ apiId });
      const results = await together(
        [create, () => s.api.apis.deleteApi({ apiId }), create, create],
        [200, 404],
      );
      expect(results[1].status).toBe(200);
      const all = "select count(*)::int as n from keys where api_id = $1";
      expect(await count(all, [apiId])).toBe(countOf(results, 200) - 1);
    }
  });

  it("of concurrent deleteKey calls one succeeds and the others are 404", async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const { keyId } = await s.seed.key();
      const results = await together(
        [
          () => s.api.keys.deleteKey({ keyId }),
          () => s.api.keys.deleteKey({ keyId, permanent: true }),
          () => s.api.keys.deleteKey({ keyId }),
        ],
        [200, 404],
      );
      expect(countOf(results, 200)).toBe(1);
    }
  });

  it("concurrent rerollKey calls of one key leave one balance, shared by every key", async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const { keyId } = await s.seed.key({ credits: { remaining: 100 } });
      const reroll = () => s.api.keys.rerollKey({ keyId, expiration: 60_000n });
      const results = await together([reroll, reroll], [200]);
      const ids = [keyId, ...results.map((r) => r.value?.data?.keyId)];
      const held = await s.db.query(
        "select remaining from keys where id = any($1::text[]) and remaining is not null",
        [ids],
      );
      expect(held).toEqual([{ remaining: 100 }]);
    }
  });

  it("concurrent updateCredits increments all count", async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const { keyId } = await s.seed.key({ credits: { remaining: 0 } });
      const inc = () =>
        s.api.keys.updateCredits({ keyId, operation: CreditsOperation.INCREMENT, value: 1n });
      await together([inc, inc, inc, inc], [200]);
      const got = await s.api.keys.getKey({ keyId });
      expect(got.data?.credits?.remaining).toBe(4n);
    }
  });

  it("concurrent migrateKeys calls with the same hashes migrate each hash once", async () => {
    const apiId = await s.seed.api();
    for (let round = 0; round < ROUNDS; round++) {
      const hashes = times(3, () => createHash("sha256").update(randomBytes(16)).digest("base64"));
      const body = {
        apiId,
        migrationId: unique("mig"),
        keys: hashes.map((hash, i) => ({ hash, externalId: `mig_${round}_${i}` })),
      };
      const migrate = () => s.api.keys.migrateKeys(body);
      const results = await together([migrate, migrate], [200]);
      const migrated = results.flatMap((r) => r.value?.data?.migrated.map((m) => m.hash) ?? []);
      expect(migrated.sort()).toEqual([...hashes].sort());
    }
  });
});
