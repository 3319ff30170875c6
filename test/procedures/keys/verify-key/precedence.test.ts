import { describe, expect, it } from "vitest";
import { type Auth, DOORS, useServer } from "../../harness/server.js";

// Every pair of verification codes (NOT_FOUND → DISABLED → EXPIRED →
// INSUFFICIENT_PERMISSIONS → RATE_LIMITED → USAGE_EXCEEDED, first failure wins) and expiry by
// server time. A refused verification spends nothing: neither credits nor rate-limit tokens.
// The instance holds two workspaces (for a root key of another one), so a verification without
// a root key names the key's API.

const s = useServer();
const HOUR = 3_600_000;
/** Every key of the table starts with this balance and one auto-applied limit of this size. */
const BALANCE = 10;
const LIMIT = 3;

type Code =
  | "NOT_FOUND"
  | "DISABLED"
  | "EXPIRED"
  | "INSUFFICIENT_PERMISSIONS"
  | "RATE_LIMITED"
  | "USAGE_EXCEEDED";

interface Made {
  keyId: string;
  key: string;
  apiId: string;
}

/** One way for a verification to fail one check, and how to take that failure away again. */
interface Failure {
  code: Code;
  how: string;
  /** createKey fields. */
  key?: Record<string, unknown>;
  /** verifyKey fields of the refused verification. */
  request?: Record<string, unknown>;
  /** The root key of the refused verification (default: none). */
  auth?: () => Promise<string>;
  /** Done after the key is created. */
  after?: (k: Made) => Promise<void>;
  /** Takes the failure away; absent when the key can never verify again. */
  cure?: (k: Made) => Promise<void>;
  /** The credits cost of the verification that shows what is left (default 1). */
  probeCost?: number;
}

const update = async (body: Record<string, unknown>) => {
  const res = await s.call("json", "keys.updateKey", body);
  expect(res.status, JSON.stringify(res.error)).toBe(200);
};

const notFound: Failure[] = [
  {
    code: "NOT_FOUND",
    how: "a root key of another workspace",
    auth: async () => s.seed.rootKey(["*.*.*"], await s.seed.workspace()),
  },
  {
    code: "NOT_FOUND",
    how: "a root key without verify_key on the key's API",
    auth: async () => s.seed.rootKey([`api.${await s.seed.api()}.verify_key`]),
  },
  {
    code: "NOT_FOUND",
    how: "a deleted API",
    after: async (k) => {
      const res = await s.call("json", "apis.deleteApi", { apiId: k.apiId });
      expect(res.status).toBe(200);
    },
  },
];

const disabled: Failure = {
  code: "DISABLED",
  how: "enabled: false",
  key: { enabled: false },
  cure: (k) => update({ keyId: k.keyId, enabled: true }),
};

const expired: Failure = {
  code: "EXPIRED",
  how: "expires in the past",
  key: { expires: 1 },
  cure: (k) => update({ keyId: k.keyId, expires: null }),
};

const denied: Failure = {
  code: "INSUFFICIENT_PERMISSIONS",
  how: "a permission the key lacks",
  request: { permissions: "precedence.missing" },
};

const limited: Failure = {
  code: "RATE_LIMITED",
  how: "a rate-limit cost above the limit",
  request: { ratelimits: [{ name: "window", cost: LIMIT + 1 }] },
};

const usage: Failure[] = [
  {
    code: "USAGE_EXCEEDED",
    how: "a credits cost above the balance",
    request: { credits: { cost: BALANCE + 1 } },
  },
  {
    code: "USAGE_EXCEEDED",
    how: "a balance of 0",
    key: { credits: { remaining: 0 } },
    probeCost: 0,
  },
];

const ORDER: Failure[][] = [notFound, [disabled], [expired], [denied], [limited], usage];

/** Every pair (first, second) where first's check comes before second's. */
const PAIRS: [string, Failure, Failure][] = [];
ORDER.forEach((earlier, i) => {
  for (const later of ORDER.slice(i + 1))
    for (const a of earlier)
      for (const b of later) PAIRS.push([`${a.code} (${a.how}) over ${b.code} (${b.how})`, a, b]);
});

const remainingOf = async (k: Made): Promise<number | null> => {
  const res = await s.call("json", "keys.getKey", { keyId: k.keyId });
  if (res.status === 200) return res.data.credits?.remaining ?? null;
  // A key of a deleted API has no key record to read: read the stored balance.
  const rows = await s.db.query<{ remaining: string | number | null }>(
    "select remaining from keys where id = $1",
    [k.keyId],
  );
  const value = rows[0]?.remaining;
  return value === null || value === undefined ? null : Number(value);
};

describe.each(DOORS)("keys.verifyKey precedence via %s", (door) => {
  const verify = (body: Record<string, unknown>, auth: Auth = null) =>
    s.call(door, "keys.verifyKey", body, auth);

  it("covers every pair of the six codes", () => {
    const covered = new Set(PAIRS.map(([, a, b]) => `${a.code}>${b.code}`));
    expect(covered.size).toBe(15);
  });

  it.each(PAIRS)("%s, spending nothing", async (_, a, b) => {
    const k: Made = await s.seed.key({
      credits: { remaining: BALANCE },
      ratelimits: [{ name: "window", limit: LIMIT, duration: HOUR, autoApply: true }],
      ...a.key,
      ...b.key,
    });
    await a.after?.(k);
    await b.after?.(k);
    const balance = (await remainingOf(k)) as number;
    const auth = (await a.auth?.()) ?? (await b.auth?.()) ?? null;

    const refused = await verify({ key: k.key, apiId: k.apiId, ...a.request, ...b.request }, auth);
    expect(refused.status, JSON.stringify(refused.error)).toBe(200);
    expect(refused.data.code).toBe(a.code);
    expect(refused.data.valid).toBe(false);
    if (a.code === "NOT_FOUND") {
      expect(Object.keys(refused.data).sort()).toEqual(["code", "valid"]);
    } else {
      expect(refused.data.keyId).toBe(k.keyId);
      // The balance as it is: nothing was taken.
      expect(refused.data.credits).toBe(balance);
    }
    expect(await remainingOf(k)).toBe(balance);

    // Take both failures away: the next verification shows the balance and the tokens untouched.
    if ((a.code === "NOT_FOUND" && !a.auth) || (b.code === "NOT_FOUND" && !b.auth)) return;
    await a.cure?.(k);
    await b.cure?.(k);
    const cost = a.probeCost ?? b.probeCost ?? 1;
    const probe = await verify({ key: k.key, apiId: k.apiId, credits: { cost } });
    expect(probe.data).toMatchObject({ valid: true, code: "VALID", credits: balance - cost });
    expect(probe.data.ratelimits).toEqual([
      expect.objectContaining({ name: "window", limit: LIMIT, remaining: LIMIT - 1 }),
    ]);
    expect(await remainingOf(k)).toBe(balance - cost);
  });
});

describe.each(DOORS)("keys.verifyKey expiry by server time via %s", (door) => {
  const verify = (body: Record<string, unknown>) => s.call(door, "keys.verifyKey", body, null);

  it("a cached VALID key is EXPIRED once the clock passes expires, VALID exactly at expires", async () => {
    const start = Date.parse("2026-10-01T08:00:00Z");
    s.clock.set(start);
    const expires = start + 5_000;
    const k = await s.seed.key({ expires, credits: { remaining: BALANCE } });
    expect((await verify({ key: k.key, apiId: k.apiId })).data).toMatchObject({
      code: "VALID",
      credits: 9,
    });

    // Within the cache's lifetime: what changes the answer is the time, not a reload.
    s.clock.set(expires);
    // EXPIRED when now > expires.
    expect((await verify({ key: k.key, apiId: k.apiId })).data).toMatchObject({
      valid: true,
      code: "VALID",
      credits: 8,
    });

    s.clock.set(expires + 1);
    const late = await verify({ key: k.key, apiId: k.apiId });
    expect(late.data).toMatchObject({
      valid: false,
      code: "EXPIRED",
      keyId: k.keyId,
      expires,
      credits: 8,
    });
    s.clock.set(expires + 60_000);
    expect((await verify({ key: k.key, apiId: k.apiId })).data.code).toBe("EXPIRED");
    expect((await s.call("json", "keys.getKey", { keyId: k.keyId })).data.credits.remaining).toBe(
      8,
    );
  });

  it("a key cached long before its expiry is EXPIRED after a jump past it, with no change made", async () => {
    const start = Date.parse("2026-10-02T08:00:00Z");
    s.clock.set(start);
    const k = await s.seed.key({ expires: start + 1 });
    expect((await verify({ key: k.key, apiId: k.apiId })).data.code).toBe("VALID");
    s.clock.set(start + 2);
    expect((await verify({ key: k.key, apiId: k.apiId })).data.code).toBe("EXPIRED");
  });
});
