import { describe, expect, it } from "vitest";
import { useServer } from "../../../harness/server.js";
import { refusal } from "../../../harness/typed.js";
import { BY_DAY, BY_HOUR, BY_MONTH, DAY, HOUR, pooledIdentity, statementOf } from "./statements.js";

// Who may read a credit statement, and what a request must say: a key's statement needs
// read_analytics on the key's API, an identity's the workspace-wide grant; a key or an
// identity of another workspace is as unknown as one that never existed (404); a bad input is
// 400 naming the field.

const s = useServer();
const T = Date.UTC(2030, 0, 1);

describe("analytics.getCreditUsage permissions", () => {
  it("reads a key's statement with read_analytics on its API, and refuses another API's grant", async () => {
    const k = await s.seed.key({ credits: { remaining: 5 } });
    const own = s.as(await s.seed.rootKey([`api.${k.apiId}.read_analytics`]));
    expect(await statementOf(s, { keyId: k.keyId }, T, T + DAY, BY_DAY, own)).toHaveLength(1);
    const other = s.as(await s.seed.rootKey([`api.${await s.seed.api()}.read_analytics`]));
    const r = await refusal(statementOf(s, { keyId: k.keyId }, T, T + DAY, BY_DAY, other));
    expect(r.status).toBe(403);
    expect(r.detail).toContain(`api.${k.apiId}.read_analytics`);
  });

  it("reads an identity's statement with api.*.read_analytics only", async () => {
    const pool = await pooledIdentity(s, 10);
    const k = await s.seed.key({ externalId: pool.externalId });
    const narrow = s.as(await s.seed.rootKey([`api.${k.apiId}.read_analytics`]));
    for (const subject of [{ identityId: pool.id }, { externalId: pool.externalId }]) {
      const r = await refusal(statementOf(s, subject, T, T + DAY, BY_DAY, narrow));
      expect(r.status).toBe(403);
      expect(r.detail).toContain("api.*.read_analytics");
    }
    const wide = s.as(await s.seed.rootKey(["api.*.read_analytics"]));
    expect(await statementOf(s, { identityId: pool.id }, T, T + DAY, BY_DAY, wide)).toHaveLength(1);
  });

  it("answers 404 for an unknown key or identity and for those of another workspace", async () => {
    const ws = await s.seed.workspace();
    const foreignRoot = await s.seed.rootKey(["*.*.*"], ws);
    const foreign = await s.seed.key(
      { apiId: await s.seed.api(ws), credits: { remaining: 1 } },
      foreignRoot,
    );
    const foreignPool = await s.seed.identity({ workspaceId: ws });
    const cases: [object, string][] = [
      [{ keyId: "key_doesNotExist000" }, "key"],
      [{ keyId: foreign.keyId }, "key"],
      [{ identityId: "id_doesNotExist0000" }, "identity"],
      [{ identityId: foreignPool.id }, "identity"],
      [{ identityId: foreignPool.externalId }, "identity"],
      [{ externalId: foreignPool.externalId }, "identity"],
    ];
    for (const [subject, kind] of cases) {
      const r = await refusal(
        s.api.analytics.getCreditUsage({
          ...subject,
          start: BigInt(T),
          end: BigInt(T + DAY),
          granularity: BY_DAY,
        }),
      );
      expect(r.status, JSON.stringify(subject)).toBe(404);
      expect(r.errorCode, JSON.stringify(subject)).toContain(kind);
    }
  });
});

describe("analytics.getCreditUsage input", () => {
  const k = () => s.seed.key();
  const ask = (body: object) =>
    refusal(
      s.api.analytics.getCreditUsage({
        start: BigInt(T),
        end: BigInt(T + DAY),
        granularity: BY_DAY,
        ...body,
      }),
    );

  it("needs exactly one of keyId, identityId and externalId", async () => {
    const none = await ask({});
    expect(none.status).toBe(400);
    expect(none.errors[0]?.location).toBe("/keyId");
    const two = await ask({ keyId: (await k()).keyId, externalId: "someone" });
    expect(two.status).toBe(400);
    expect(two.errors.map((e) => e.location).join()).toMatch(/keyId|externalId/);
  });

  it("bounds the ids", async () => {
    const long = "k".repeat(256);
    for (const [field, body] of [
      ["/keyId", { keyId: long }],
      ["/identityId", { identityId: long }],
      ["/externalId", { externalId: "not valid!" }],
    ] as const) {
      const r = await ask(body);
      expect(r.status, field).toBe(400);
      expect(
        r.errors.map((e) => e.location),
        field,
      ).toContain(field);
    }
  });

  it("names start, end and granularity when they are out of bounds", async () => {
    const keyId = (await k()).keyId;
    const cases = [
      ["/start", { start: -1n }],
      ["/end", { end: BigInt(T) }],
      ["/end", { end: BigInt(T - HOUR) }],
      ["/end", { end: BigInt(T + 1001 * HOUR), granularity: BY_HOUR }],
      ["/end", { end: BigInt(T + 1001 * DAY), granularity: BY_DAY }],
      ["/end", { end: 9_000_000_000_000_000n }],
      ["/granularity", { granularity: 0 }],
    ] as const;
    for (const [field, body] of cases) {
      const r = await ask({ keyId, ...body });
      expect(r.status, `${field} ${JSON.stringify(body, (_, v) => String(v))}`).toBe(400);
      expect(r.errors.map((e) => e.location)).toContain(field);
    }
  });

  it("accepts exactly 1000 buckets, zero-filled", async () => {
    const keyId = (await k()).keyId;
    const hours = await statementOf(s, { keyId }, T, T + 1000 * HOUR, BY_HOUR);
    expect(hours).toHaveLength(1000);
    expect(hours.every((b) => b.spent === 0 && b.refilled === 0 && b.adjusted === 0)).toBe(true);
    const months = await statementOf(s, { keyId }, T + 5, T + 1, BY_MONTH).catch(() => null);
    expect(months).toBeNull();
  });
});
