import { describe, expect, it } from "vitest";
import { VerifyKeyCode } from "../../../../gen/latchkey/v2/keys_pb.js";
import { useServer } from "../../../harness/server.js";
import { refusal } from "../../../harness/typed.js";
import { HOUR, verifierOf } from "./calls.js";

// Network rules: a key's allowedCidrs (else its API's) name the ranges its verifications
// must come from, given as clientIp. From elsewhere, or without clientIp while a rule exists,
// the verification is FORBIDDEN and spends neither credits nor rate-limit tokens.

const s = useServer();
const verify = verifierOf(s);

/** A key with 10 credits, one auto-applied limit of 100 an hour, and these other settings. */
const keyWith = (body: Record<string, unknown> = {}) =>
  s.seed.key({
    credits: { remaining: 10 },
    ratelimits: [{ name: "window", limit: 100, duration: HOUR, autoApply: true }],
    ...body,
  });

/** What the key has left, read through getKey and a verification that spends nothing. */
async function leftOf(k: { keyId: string; key: string; apiId: string }, clientIp?: string) {
  const got = await s.api.keys.getKey({ keyId: k.keyId });
  const probe = await verify({
    key: k.key,
    apiId: k.apiId,
    credits: { cost: 0n },
    ratelimits: [{ name: "window", cost: 0n }],
    ...(clientIp ? { clientIp } : {}),
  });
  return { credits: got.data?.credits?.remaining, tokens: probe.ratelimits[0]?.remaining };
}

describe("keys.verifyKey with a network rule", () => {
  it("lets a client inside the key's ranges through, IPv4 and IPv6", async () => {
    const k = await keyWith({ allowedCidrs: ["10.0.0.0/8", "2001:db8::/32", "203.0.113.7"] });
    for (const clientIp of ["10.1.2.3", "::ffff:10.9.9.9", "2001:db8:1::5", "203.0.113.7"]) {
      const data = await verify({ key: k.key, apiId: k.apiId, clientIp });
      expect({ clientIp, code: VerifyKeyCode[data.code] }).toEqual({ clientIp, code: "VALID" });
    }
    expect(await leftOf(k, "10.0.0.1")).toEqual({ credits: 6n, tokens: 96n });
  });

  it("answers FORBIDDEN from outside, or without clientIp, and spends nothing", async () => {
    const k = await keyWith({ allowedCidrs: ["10.0.0.0/8"] });
    for (const clientIp of ["11.0.0.1", "2001:db8::1", "::ffff:11.0.0.1", undefined]) {
      const data = await verify({ key: k.key, apiId: k.apiId, ...(clientIp ? { clientIp } : {}) });
      expect(data).toMatchObject({ valid: false, code: VerifyKeyCode.FORBIDDEN, keyId: k.keyId });
      expect(data.credits).toBe(10n);
      // The limits were not evaluated: a refusal before them takes no token.
      expect(data.ratelimits).toEqual([]);
    }
    expect(await leftOf(k, "10.0.0.1")).toEqual({ credits: 10n, tokens: 100n });
  });

  it("is checked after DISABLED and EXPIRED and before the permissions query", async () => {
    const off = await keyWith({ allowedCidrs: ["10.0.0.0/8"], enabled: false });
    const outside = { clientIp: "192.0.2.1" };
    expect((await verify({ key: off.key, apiId: off.apiId, ...outside })).code).toBe(
      VerifyKeyCode.DISABLED,
    );
    const old = await keyWith({ allowedCidrs: ["10.0.0.0/8"], expires: 1 });
    expect((await verify({ key: old.key, apiId: old.apiId, ...outside })).code).toBe(
      VerifyKeyCode.EXPIRED,
    );
    const k = await keyWith({ allowedCidrs: ["10.0.0.0/8"] });
    const req = { key: k.key, apiId: k.apiId, permissions: "not.held" };
    expect((await verify({ ...req, ...outside })).code).toBe(VerifyKeyCode.FORBIDDEN);
    expect((await verify({ ...req, clientIp: "10.0.0.1" })).code).toBe(
      VerifyKeyCode.INSUFFICIENT_PERMISSIONS,
    );
  });

  it("records the FORBIDDEN verification as an event, with no credits spent", async () => {
    const k = await keyWith({ allowedCidrs: ["10.0.0.0/8"] });
    await verify({ key: k.key, apiId: k.apiId, clientIp: "192.0.2.1" });
    await s.app.deps.events.flush();
    const rows = await s.db.query<{ outcome: string; spent: string | number }>(
      "select outcome, spent_credits as spent from key_verifications where key_id = $1",
      [k.keyId],
    );
    expect(rows.map((r) => [r.outcome, Number(r.spent)])).toEqual([["FORBIDDEN", 0]]);
  });
});

describe("network rules of an API", () => {
  it("apply to its keys that have none of their own; a key's own list replaces them", async () => {
    const apiId = (await s.api.apis.createApi({ name: "networked", allowedCidrs: ["10.0.0.0/8"] }))
      .data?.apiId as string;
    const plain = await keyWith({ apiId });
    const own = await keyWith({ apiId, allowedCidrs: ["192.0.2.0/24"] });
    const at = async (k: { key: string }, clientIp: string) =>
      VerifyKeyCode[(await verify({ key: k.key, apiId, clientIp })).code];
    expect(await at(plain, "10.0.0.1")).toBe("VALID");
    expect(await at(plain, "192.0.2.1")).toBe("FORBIDDEN");
    expect(await at(own, "192.0.2.1")).toBe("VALID");
    expect(await at(own, "10.0.0.1")).toBe("FORBIDDEN");
    expect((await s.api.apis.getApi({ apiId })).data?.allowedCidrs).toEqual(["10.0.0.0/8"]);
    const listed = await s.api.apis.listApis({});
    expect(listed.data.find((a) => a.id === apiId)?.allowedCidrs).toEqual(["10.0.0.0/8"]);
  });

  it("an API without ranges shows none, and its keys verify from anywhere", async () => {
    const apiId = (await s.api.apis.createApi({ name: "open" })).data?.apiId as string;
    expect((await s.api.apis.getApi({ apiId })).data?.allowedCidrs).toEqual([]);
    const k = await keyWith({ apiId });
    expect((await verify({ key: k.key, apiId })).code).toBe(VerifyKeyCode.VALID);
  });
});

describe("allowedCidrs of a key", () => {
  it("getKey and listKeys show the key's own list, not its API's", async () => {
    const apiId = (await s.api.apis.createApi({ name: "shown", allowedCidrs: ["10.0.0.0/8"] })).data
      ?.apiId as string;
    const own = await keyWith({ apiId, allowedCidrs: ["2001:db8::/32"] });
    const inherits = await keyWith({ apiId });
    expect((await s.api.keys.getKey({ keyId: own.keyId })).data?.allowedCidrs).toEqual([
      "2001:db8::/32",
    ]);
    expect((await s.api.keys.getKey({ keyId: inherits.keyId })).data?.allowedCidrs).toEqual([]);
    const page = await s.api.apis.listKeys({ apiId });
    const shown = new Map(page.data.map((k) => [k.keyId, k.allowedCidrs]));
    expect(shown).toEqual(
      new Map([
        [own.keyId, ["2001:db8::/32"]],
        [inherits.keyId, []],
      ]),
    );
  });

  it("updateKey: omitted keeps the list, a list replaces it, a cleared list lets the API's apply, at once", async () => {
    const apiId = (await s.api.apis.createApi({ name: "upd", allowedCidrs: ["10.0.0.0/8"] })).data
      ?.apiId as string;
    const k = await keyWith({ apiId, allowedCidrs: ["192.0.2.0/24"] });
    const at = async (clientIp: string) =>
      VerifyKeyCode[(await verify({ key: k.key, apiId, clientIp })).code];
    expect(await at("192.0.2.9")).toBe("VALID");
    await s.api.keys.updateKey({ keyId: k.keyId, name: "renamed" });
    expect(await at("192.0.2.9")).toBe("VALID");
    expect(await at("198.51.100.1")).toBe("FORBIDDEN");
    await s.api.keys.updateKey({ keyId: k.keyId, allowedCidrs: ["198.51.100.0/24"] });
    expect(await at("198.51.100.1")).toBe("VALID");
    expect(await at("192.0.2.9")).toBe("FORBIDDEN");
    // Cleared through the mask (over gRPC, as null over /v2): the API's ranges apply again.
    await s.api.keys.updateKey({ keyId: k.keyId, updateMask: { paths: ["allowed_cidrs"] } });
    expect((await s.api.keys.getKey({ keyId: k.keyId })).data?.allowedCidrs).toEqual([]);
    expect(await at("10.0.0.1")).toBe("VALID");
    expect(await at("198.51.100.1")).toBe("FORBIDDEN");
  });

  it("/v2 updateKey takes null and [] to clear the list", async () => {
    for (const cleared of [null, []]) {
      const k = await keyWith({ allowedCidrs: ["10.0.0.0/8"] });
      const res = await s.call("json", "keys.updateKey", {
        keyId: k.keyId,
        allowedCidrs: cleared,
      });
      expect(res.status).toBe(200);
      const got = await s.call("json", "keys.getKey", { keyId: k.keyId });
      expect(got.data.allowedCidrs).toBeUndefined();
      expect((await verify({ key: k.key, apiId: k.apiId })).code).toBe(VerifyKeyCode.VALID);
    }
  });

  it("rerollKey gives the new key the same ranges", async () => {
    const k = await keyWith({ allowedCidrs: ["10.0.0.0/8"] });
    const rolled = await s.api.keys.rerollKey({ keyId: k.keyId, expiration: 0n });
    const next = rolled.data?.keyId as string;
    expect((await s.api.keys.getKey({ keyId: next })).data?.allowedCidrs).toEqual(["10.0.0.0/8"]);
    const key = rolled.data?.key as string;
    expect((await verify({ key, apiId: k.apiId, clientIp: "11.0.0.1" })).code).toBe(
      VerifyKeyCode.FORBIDDEN,
    );
  });
});

describe("bad network input", () => {
  it.each([
    [["10.0.0.0/8", "not-an-address"], "/allowedCidrs/1", "must be an IPv4 or IPv6 address"],
    [["10.0.0.1/8"], "/allowedCidrs/0", "did you mean 10.0.0.0/8?"],
    [["10.0.0.0/33"], "/allowedCidrs/0", "from 0 to 32"],
    [["fe80::1%eth0"], "/allowedCidrs/0", "must be an IPv4 or IPv6 address"],
    [Array.from({ length: 101 }, (_, i) => `10.0.${i}.0/24`), "/allowedCidrs", "at most 100"],
  ])("createKey with %j is 400 at %s", async (allowedCidrs, location, message) => {
    const apiId = await s.seed.api();
    const r = await refusal(s.api.keys.createKey({ apiId, allowedCidrs }));
    expect(r.status).toBe(400);
    expect(r.errors[0]?.location).toBe(location);
    expect(r.errors[0]?.message).toContain(message);
  });

  it("updateKey and createApi check the ranges the same way", async () => {
    const k = await s.seed.key();
    const u = await refusal(s.api.keys.updateKey({ keyId: k.keyId, allowedCidrs: ["::/129"] }));
    expect([u.status, u.errors[0]?.location]).toEqual([400, "/allowedCidrs/0"]);
    const a = await refusal(s.api.apis.createApi({ name: "bad", allowedCidrs: ["x", "y"] }));
    expect([a.status, a.errors.map((e) => e.location)]).toEqual([
      400,
      ["/allowedCidrs/0", "/allowedCidrs/1"],
    ]);
  });

  it.each(["10.0.0.256", "10.0.0.0/8", "::1%lo", "[::1]", "10.0.0.1:443", ""])(
    "clientIp %j is 400 at /clientIp, whatever the key",
    async (clientIp) => {
      const r = await refusal(s.as(null).keys.verifyKey({ key: "nope", apiId: "api_x", clientIp }));
      expect(r.status).toBe(400);
      expect(r.errors.map((e) => e.location)).toEqual(["/clientIp"]);
    },
  );
});
