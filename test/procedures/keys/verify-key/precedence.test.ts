import { Code, ConnectError } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { CreditsOperation, VerifyKeyCode } from "../../../../gen/latchkey/v2/keys_pb.js";
import { useServer } from "../../../harness/server.js";
import { refusal } from "../../../harness/typed.js";
import { HOUR, NOT_FOUND_ANSWER, type VerifyRequest, verifierOf } from "./calls.js";

// keys.verifyKey runs its checks in a fixed order, the first failure wins: NOT_FOUND →
// DISABLED → EXPIRED → FORBIDDEN → INSUFFICIENT_PERMISSIONS → RATE_LIMITED → USAGE_EXCEEDED. Here every
// pair of codes, the errors that stop a verification before or after those checks, and expiry
// by server time. A refused verification spends nothing: neither credits nor rate-limit
// tokens. The instance holds two workspaces (for a root key of another one), so a
// verification without a root key names the key's API.

const s = useServer();
const verify = verifierOf(s);
/** Every key of the table starts with this balance and one auto-applied limit of this size. */
const BALANCE = 10n;
const LIMIT = 3n;

interface Made {
  keyId: string;
  key: string;
  apiId: string;
}

/** One way for a verification to fail one check, and how to take that failure away again. */
interface Failure {
  code: VerifyKeyCode;
  how: string;
  /** createKey fields. */
  key?: Record<string, unknown>;
  /** verifyKey fields of the refused verification. */
  request?: Pick<VerifyRequest, "permissions" | "ratelimits" | "credits" | "clientIp">;
  /** The root key of the refused verification (default: none). */
  auth?: () => Promise<string>;
  /** Done after the key is created. */
  after?: (k: Made) => Promise<void>;
  /** Takes the failure away; absent when the key can never verify again. */
  cure?: (k: Made) => Promise<void>;
  /** The credits cost of the verification that shows what is left (default 1). */
  probeCost?: bigint;
}

const notFound: Failure[] = [
  {
    code: VerifyKeyCode.NOT_FOUND,
    how: "a root key of another workspace",
    auth: async () => s.seed.rootKey(["*.*.*"], await s.seed.workspace()),
  },
  {
    code: VerifyKeyCode.NOT_FOUND,
    how: "a root key without verify_key on the key's API",
    auth: async () => s.seed.rootKey([`api.${await s.seed.api()}.verify_key`]),
  },
  {
    code: VerifyKeyCode.NOT_FOUND,
    how: "a deleted API",
    after: async (k) => {
      await s.api.apis.deleteApi({ apiId: k.apiId });
    },
  },
];

const disabled: Failure = {
  code: VerifyKeyCode.DISABLED,
  how: "enabled: false",
  key: { enabled: false },
  cure: async (k) => {
    await s.api.keys.updateKey({ keyId: k.keyId, enabled: true });
  },
};

const expired: Failure = {
  code: VerifyKeyCode.EXPIRED,
  how: "expires in the past",
  key: { expires: 1 },
  cure: async (k) => {
    await s.api.keys.updateKey({ keyId: k.keyId, updateMask: { paths: ["expires"] } });
  },
};

const forbidden: Failure = {
  code: VerifyKeyCode.FORBIDDEN,
  how: "a client outside the key's network ranges",
  key: { allowedCidrs: ["10.0.0.0/8"] },
  request: { clientIp: "192.0.2.1" },
  cure: async (k) => {
    await s.api.keys.updateKey({ keyId: k.keyId, updateMask: { paths: ["allowed_cidrs"] } });
  },
};

const denied: Failure = {
  code: VerifyKeyCode.INSUFFICIENT_PERMISSIONS,
  how: "a permission the key lacks",
  request: { permissions: "precedence.missing" },
};

const limited: Failure = {
  code: VerifyKeyCode.RATE_LIMITED,
  how: "a rate-limit cost above the limit",
  request: { ratelimits: [{ name: "window", cost: LIMIT + 1n }] },
};

const usage: Failure[] = [
  {
    code: VerifyKeyCode.USAGE_EXCEEDED,
    how: "a credits cost above the balance",
    request: { credits: { cost: BALANCE + 1n } },
  },
  {
    code: VerifyKeyCode.USAGE_EXCEEDED,
    how: "a balance of 0",
    key: { credits: { remaining: 0 } },
    probeCost: 0n,
  },
];

const ORDER: Failure[][] = [
  notFound,
  [disabled],
  [expired],
  [forbidden],
  [denied],
  [limited],
  usage,
];

/** Every pair (first, second) where first's check comes before second's. */
const PAIRS: [string, Failure, Failure][] = [];
ORDER.forEach((earlier, i) => {
  for (const later of ORDER.slice(i + 1))
    for (const a of earlier)
      for (const b of later)
        PAIRS.push([
          `${VerifyKeyCode[a.code]} (${a.how}) over ${VerifyKeyCode[b.code]} (${b.how})`,
          a,
          b,
        ]);
});

/** The stored balance: read through keys.getKey, or from storage once the key's API is gone. */
const remainingOf = async (k: Made): Promise<bigint | null> => {
  const got = await s.api.keys.getKey({ keyId: k.keyId }).catch((err: unknown) => {
    if (ConnectError.from(err).code !== Code.NotFound) throw err;
  });
  if (got) return got.data?.credits?.remaining ?? null;
  const rows = await s.db.query<{ remaining: string | number | null }>(
    "select remaining from keys where id = $1",
    [k.keyId],
  );
  const value = rows[0]?.remaining;
  return value === null || value === undefined ? null : BigInt(value);
};

describe("keys.verifyKey precedence", () => {
  it("covers every pair of the seven codes", () => {
    const covered = new Set(PAIRS.map(([, a, b]) => `${a.code}>${b.code}`));
    expect(covered.size).toBe(21);
  });

  it.each(PAIRS)("%s, spending nothing", async (_, a, b) => {
    const k: Made = await s.seed.key({
      credits: { remaining: Number(BALANCE) },
      ratelimits: [{ name: "window", limit: Number(LIMIT), duration: HOUR, autoApply: true }],
      ...a.key,
      ...b.key,
    });
    await a.after?.(k);
    await b.after?.(k);
    const balance = (await remainingOf(k)) as bigint;
    const auth = (await a.auth?.()) ?? (await b.auth?.()) ?? null;

    const refused = await verify({ key: k.key, apiId: k.apiId, ...a.request, ...b.request }, auth);
    if (a.code === VerifyKeyCode.NOT_FOUND) {
      expect(refused).toEqual(NOT_FOUND_ANSWER);
    } else {
      expect(refused).toMatchObject({ valid: false, code: a.code, keyId: k.keyId });
      // The balance as it is: nothing was taken.
      expect(refused.credits).toBe(balance);
    }
    expect(await remainingOf(k)).toBe(balance);

    // Take both failures away: the next verification shows the balance and the tokens untouched.
    if (
      (a.code === VerifyKeyCode.NOT_FOUND && !a.auth) ||
      (b.code === VerifyKeyCode.NOT_FOUND && !b.auth)
    )
      return;
    await a.cure?.(k);
    await b.cure?.(k);
    const cost = a.probeCost ?? b.probeCost ?? 1n;
    const probe = await verify({ key: k.key, apiId: k.apiId, credits: { cost } });
    expect(probe).toMatchObject({
      valid: true,
      code: VerifyKeyCode.VALID,
      credits: balance - cost,
    });
    expect(probe.ratelimits).toMatchObject([
      { name: "window", limit: LIMIT, remaining: LIMIT - 1n },
    ]);
    expect(await remainingOf(k)).toBe(balance - cost);
  });

  it("USAGE_EXCEEDED gives the rate-limit tokens back", async () => {
    const k = await s.seed.key({
      credits: { remaining: 0 },
      ratelimits: [{ name: "rlx", limit: 1, duration: HOUR }],
    });
    const exceeded = await verify({ key: k.key, apiId: k.apiId });
    expect(exceeded.code).toBe(VerifyKeyCode.USAGE_EXCEEDED);
    expect(exceeded.ratelimits).toMatchObject([{ remaining: 1n, exceeded: false }]);
    await s.api.keys.updateCredits({ keyId: k.keyId, operation: CreditsOperation.SET, value: 1n });
    expect((await verify({ key: k.key, apiId: k.apiId })).code).toBe(VerifyKeyCode.VALID);
  });

  it("a permissions query syntax error is 400 at /permissions whatever the key's state", async () => {
    const off = await s.seed.key({ enabled: false });
    for (const [key, apiId] of [
      ["unknown_key_x", off.apiId],
      [off.key, off.apiId],
    ]) {
      const r = await refusal(
        s.as(null).keys.verifyKey({ key, apiId, permissions: "docs.read AND" }),
      );
      expect(r.status).toBe(400);
      expect(r.errorCode).toBe("err:svc:bad_request:permissions_query_syntax_error");
      expect(r.errors[0]?.location).toBe("/permissions");
      expect(r.errors[0]?.message).toContain("position 13");
    }
  });

  it("an unknown requested rate limit is 412 only once the key passes its status checks", async () => {
    const k = await s.seed.key();
    const r = await refusal(
      s
        .as(null)
        .keys.verifyKey({ key: k.key, apiId: k.apiId, ratelimits: [{ name: "missing_limit" }] }),
    );
    expect(r.status).toBe(412);
    expect(r.detail).toContain("missing_limit");
    const off = await s.seed.key({ enabled: false });
    const data = await verify({
      key: off.key,
      apiId: off.apiId,
      ratelimits: [{ name: "missing_limit" }],
    });
    expect(data.code).toBe(VerifyKeyCode.DISABLED);
  });
});

describe("keys.verifyKey expiry by server time", () => {
  it("a cached VALID key is EXPIRED once the clock passes expires, VALID exactly at expires", async () => {
    const start = Date.parse("2026-10-01T08:00:00Z");
    s.clock.set(start);
    const expires = start + 5_000;
    const k = await s.seed.key({ expires, credits: { remaining: Number(BALANCE) } });
    const at = () => verify({ key: k.key, apiId: k.apiId });
    expect(await at()).toMatchObject({ code: VerifyKeyCode.VALID, credits: 9n });

    // Within the cache's lifetime: what changes the answer is the time, not a reload.
    s.clock.set(expires);
    // EXPIRED when now > expires.
    expect(await at()).toMatchObject({ valid: true, code: VerifyKeyCode.VALID, credits: 8n });

    s.clock.set(expires + 1);
    expect(await at()).toMatchObject({
      valid: false,
      code: VerifyKeyCode.EXPIRED,
      keyId: k.keyId,
      expires: BigInt(expires),
      credits: 8n,
    });
    s.clock.set(expires + 60_000);
    expect((await at()).code).toBe(VerifyKeyCode.EXPIRED);
    expect(await remainingOf(k)).toBe(8n);
  });

  it("a key cached long before its expiry is EXPIRED after a jump past it, with no change made", async () => {
    const start = Date.parse("2026-10-02T08:00:00Z");
    s.clock.set(start);
    const k = await s.seed.key({ expires: start + 1 });
    expect((await verify({ key: k.key, apiId: k.apiId })).code).toBe(VerifyKeyCode.VALID);
    s.clock.set(start + 2);
    expect((await verify({ key: k.key, apiId: k.apiId })).code).toBe(VerifyKeyCode.EXPIRED);
  });
});
