import type { MessageInitShape } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { type RatelimitRequestSchema, RefillInterval } from "../../../gen/latchkey/v2/common_pb.js";
import { useServer } from "../../harness/server.js";
import { refusal } from "../../harness/typed.js";

// identities.updateIdentity: changes an identity's metadata and/or rate limits. With an update
// mask (the /v2 door derives one from the keys present) the mask names what changes, and a
// masked field left empty is cleared; without one, a field changes when it is set. Rate limits
// are replaced by name: a kept name keeps its id. Audited as identity.update and ratelimit.*.

const s = useServer();
type LimitInit = MessageInitShape<typeof RatelimitRequestSchema>;
const limit = (name: string, extra: Partial<LimitInit> = {}): LimitInit => ({
  name,
  limit: 10n,
  duration: 60000n,
  ...extra,
});
let n = 0;

/** An identity made through createIdentity with these meta and rate limits. */
async function made(body: { meta?: Record<string, number>; ratelimits?: LimitInit[] } = {}) {
  const externalId = `chg_${++n}_${Date.now()}`;
  const res = await s.api.identities.createIdentity({ externalId, ...body });
  return { id: res.data?.identityId as string, externalId };
}

describe("identities.updateIdentity", () => {
  it("leaves fields that are not set alone, an empty list included when there is no mask", async () => {
    const { id } = await made({ meta: { a: 1 }, ratelimits: [limit("reqs")] });
    const res = await s.api.identities.updateIdentity({ identity: id, meta: { b: 2 } });
    expect(res.data?.meta).toEqual({ b: 2 });
    expect(res.data?.ratelimits.map((r) => r.name)).toEqual(["reqs"]);
    const unmasked = await s.api.identities.updateIdentity({ identity: id, ratelimits: [] });
    expect(unmasked.data?.ratelimits).toHaveLength(1);
  });

  it.each([
    ["set empty", { meta: {}, ratelimits: [] }],
    ["left unset", {}],
  ])("clears the masked meta and rate limits %s", async (_, body) => {
    const { externalId } = await made({ meta: { a: 1 }, ratelimits: [limit("reqs")] });
    const updateMask = { paths: ["meta", "ratelimits"] };
    const res = await s.api.identities.updateIdentity({ externalId, ...body, updateMask });
    expect(res.data?.meta).toBeUndefined();
    expect(res.data?.ratelimits).toEqual([]);
    const got = await s.api.identities.getIdentity({ externalId });
    expect(got.data?.meta).toBeUndefined();
    expect(got.data?.ratelimits).toEqual([]);
  });

  it("replaces rate limits by name: kept names keep their id, others come and go", async () => {
    const { id } = await made({ ratelimits: [limit("keep"), limit("drop")] });
    const before = (await s.api.identities.getIdentity({ identity: id })).data?.ratelimits;
    const keepId = before?.find((r) => r.name === "keep")?.id;
    const res = await s.api.identities.updateIdentity({
      identity: id,
      ratelimits: [limit("keep", { limit: 99n }), limit("new", { autoApply: false })],
    });
    expect(res.data?.ratelimits).toMatchObject([
      { id: keepId, name: "keep", limit: 99n, duration: 60000n, autoApply: true },
      { id: expect.stringMatching(/^rl_/), name: "new", limit: 10n, autoApply: false },
    ]);
    const audit = await s.db.query<{ event: string }>(
      "select event from audit_logs where request_id = $1 order by event",
      [res.meta?.requestId],
    );
    expect(audit.map((a) => a.event)).toEqual([
      "identity.update",
      "ratelimit.create",
      "ratelimit.delete",
      "ratelimit.update",
    ]);
  });

  it("changes nothing and writes nothing for a request that names only the identity", async () => {
    const { id } = await made({ meta: { a: 1 } });
    const before = await s.snapshot();
    const res = await s.api.identities.updateIdentity({ identity: id });
    expect(res.data?.meta).toEqual({ a: 1 });
    expect(await s.changesSince(before)).toEqual({});
  });

  it.each([
    ["no identity", { meta: {} }, "/identity"],
    [
      "a duplicate rate-limit name",
      { identity: "x", ratelimits: [limit("dup"), limit("dup")] },
      "/ratelimits/1/name",
    ],
    [
      "51 rate limits",
      { identity: "x", ratelimits: Array.from({ length: 51 }, (_, i) => limit(`n${i}xx`)) },
      "/ratelimits",
    ],
    ["meta over 64 KiB", { identity: "x", meta: { v: "y".repeat(70_000) } }, "/meta"],
  ])("rejects %s with 400 and writes nothing", async (_, body, location) => {
    const before = await s.snapshot();
    const r = await refusal(s.api.identities.updateIdentity(body));
    expect(r.code).toBe(Code.InvalidArgument);
    expect(r.status).toBe(400);
    expect(r.errors[0]?.location).toBe(location);
    expect(await s.changesSince(before)).toEqual({});
  });

  it("answers an unknown, deleted or foreign identity with 404", async () => {
    const deleted = await made();
    await s.api.identities.deleteIdentity({ identity: deleted.id });
    const foreign = await s.seed.identity({ workspaceId: await s.seed.workspace() });
    for (const identity of ["nobody", deleted.id, foreign.id]) {
      const r = await refusal(s.api.identities.updateIdentity({ identity, meta: { a: 1 } }));
      expect(r.code).toBe(Code.NotFound);
      expect(r).toMatchObject({ status: 404, errorCode: "err:svc:data:identity_not_found" });
    }
  });

  it("answers 403 naming identity.<id>.update_identity and writes nothing", async () => {
    const { id } = await made();
    const reader = s.as(await s.seed.rootKey(["identity.*.read_identity"]));
    const before = await s.snapshot();
    const r = await refusal(reader.identities.updateIdentity({ identity: id, meta: { a: 1 } }));
    expect(r.code).toBe(Code.PermissionDenied);
    expect(r.status).toBe(403);
    expect(r.detail).toContain(`identity.${id}.update_identity`);
    expect(await s.changesSince(before)).toEqual({});
  });
});

describe("on the /v2 JSON door", () => {
  it.each([
    ["null", null, null],
    ["{} and []", {}, []],
  ])("clears meta and rate limits given as %s", async (_, meta, ratelimits) => {
    const { externalId } = await made({ meta: { a: 1 }, ratelimits: [limit("reqs")] });
    const res = await s.call("json", "identities.updateIdentity", { externalId, meta, ratelimits });
    expect(res.status).toBe(200);
    const got = await s.api.identities.getIdentity({ externalId });
    expect(got.data?.meta).toBeUndefined();
    expect(got.data?.ratelimits).toEqual([]);
  });
});

// An identity's credit pool, tri-state like a key's credits: absent leaves it alone, null
// makes it unlimited, a value replaces the whole setting; `{"refill": null}` drops the refill
// and keeps the balance. Audited as identity.update.
describe("identities.updateIdentity credits", () => {
  const pooled = async () => {
    const externalId = `pool_${++n}_${Date.now()}`;
    await s.api.identities.createIdentity({
      externalId,
      credits: { remaining: 10n, refill: { interval: RefillInterval.DAILY, amount: 10n } },
    });
    return externalId;
  };
  const creditsOf = async (externalId: string) =>
    (await s.api.identities.getIdentity({ externalId })).data?.credits;

  it("leaves the pool alone when credits are absent", async () => {
    const externalId = await pooled();
    const res = await s.call("json", "identities.updateIdentity", { externalId, meta: { a: 1 } });
    expect(res.status).toBe(200);
    expect(await creditsOf(externalId)).toMatchObject({ remaining: 10n, refill: { amount: 10n } });
  });

  it("makes the pool unlimited with credits null", async () => {
    const externalId = await pooled();
    const res = await s.call("json", "identities.updateIdentity", { externalId, credits: null });
    expect(res.status).toBe(200);
    expect(await creditsOf(externalId)).toBeUndefined();
  });

  it("replaces the whole setting with a value, and is audited", async () => {
    const externalId = await pooled();
    const res = await s.api.identities.updateIdentity({ externalId, credits: { remaining: 3n } });
    expect(res.data?.credits).toEqual(expect.objectContaining({ remaining: 3n }));
    expect(res.data?.credits?.refill).toBeUndefined();
    expect(await creditsOf(externalId)).toMatchObject({ remaining: 3n });
    const audit = await s.db.query<{ event: string; description: string }>(
      "select event, description from audit_logs where request_id = $1",
      [res.meta?.requestId],
    );
    expect(audit).toMatchObject([
      { event: "identity.update", description: expect.stringContaining("credits") },
    ]);
  });

  it("drops the refill and keeps the balance with refill null", async () => {
    const externalId = await pooled();
    await s.api.identities.updateIdentity({
      externalId,
      credits: { remaining: 4n, refill: { interval: RefillInterval.DAILY, amount: 10n } },
    });
    const res = await s.call("json", "identities.updateIdentity", {
      externalId,
      credits: { refill: null },
    });
    expect(res.status).toBe(200);
    const got = await creditsOf(externalId);
    expect(got?.remaining).toBe(4n);
    expect(got?.refill).toBeUndefined();
  });

  it("rejects a refill without a balance with 400 and writes nothing", async () => {
    const externalId = await pooled();
    const before = await s.snapshot();
    const r = await refusal(
      s.api.identities.updateIdentity({
        externalId,
        credits: { refill: { interval: RefillInterval.DAILY, amount: 5n } },
        updateMask: { paths: ["credits", "credits.refill"] },
      }),
    );
    expect(r.status).toBe(400);
    expect(r.errors.map((e) => e.location)).toContain("/credits/remaining");
    expect(await s.changesSince(before)).toEqual({});
  });
});
