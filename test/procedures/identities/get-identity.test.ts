import { Code } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { RefillInterval } from "../../../gen/latchkey/v2/common_pb.js";
import { useServer } from "../../harness/server.js";
import { refusal } from "../../harness/typed.js";

// identities.getIdentity: one live identity of the caller's workspace, named by `identity`
// (its id, else its externalId) or by `externalId` alone. It looks the identity up before it
// checks identity.<id>.read_identity, so a missing one is 404 whatever the key may do.

const s = useServer();

describe("identities.getIdentity", () => {
  it("finds an identity by id, by externalId in `identity`, and by `externalId`", async () => {
    const { id, externalId } = await s.seed.identity();
    for (const ref of [{ identity: id }, { identity: externalId }, { externalId }]) {
      const res = await s.api.identities.getIdentity(ref);
      expect(res.data).toMatchObject({ id, externalId, ratelimits: [] });
      expect(res.data?.meta).toBeUndefined();
    }
  });

  it("answers the identity's meta and rate limits", async () => {
    const externalId = `with_limits_${Date.now()}`;
    await s.api.identities.createIdentity({
      externalId,
      meta: { plan: "pro" },
      ratelimits: [{ name: "requests", limit: 7n, duration: 1000n }],
    });
    const res = await s.api.identities.getIdentity({ externalId });
    expect(res.data?.meta).toEqual({ plan: "pro" });
    expect(res.data?.ratelimits).toMatchObject([
      { name: "requests", limit: 7n, duration: 1000n, autoApply: true },
    ]);
  });

  it("matches an id before an externalId", async () => {
    const target = await s.seed.identity();
    // Another identity whose externalId equals the first one's id.
    await s.seed.identity({ externalId: target.id });
    const res = await s.api.identities.getIdentity({ identity: target.id });
    expect(res.data?.id).toBe(target.id);
  });

  it("does not treat an id as an externalId when `externalId` is given", async () => {
    const { id } = await s.seed.identity();
    const r = await refusal(s.api.identities.getIdentity({ externalId: id }));
    expect(r.status).toBe(404);
  });

  it.each([
    ["neither identity nor externalId", {}, "/identity", /give one of identity, externalId/],
    ["both identity and externalId", { identity: "a", externalId: "a" }, "/externalId", /together/],
    ["an empty identity", { identity: "" }, "/identity", /at least 1/],
  ])("rejects %s with 400", async (_, ref, location, message) => {
    const r = await refusal(s.api.identities.getIdentity(ref));
    expect(r.code).toBe(Code.InvalidArgument);
    expect(r.status).toBe(400);
    expect(r.errors).toEqual([{ location, message: expect.stringMatching(message) }]);
  });

  it.each([
    ["unknown", "nobody_here"],
    ["malformed", "no such / id"],
  ])("answers an %s identity with 404", async (_, identity) => {
    const r = await refusal(s.api.identities.getIdentity({ identity }));
    expect(r.code).toBe(Code.NotFound);
    expect(r).toMatchObject({ status: 404, errorCode: "err:svc:data:identity_not_found" });
  });

  it("answers a deleted identity with 404", async () => {
    const { id } = await s.seed.identity();
    await s.api.identities.deleteIdentity({ identity: id });
    expect((await refusal(s.api.identities.getIdentity({ identity: id }))).status).toBe(404);
  });

  it("does not reveal another workspace's identity", async () => {
    const { id, externalId } = await s.seed.identity({ workspaceId: await s.seed.workspace() });
    expect((await refusal(s.api.identities.getIdentity({ identity: id }))).status).toBe(404);
    expect((await refusal(s.api.identities.getIdentity({ externalId }))).status).toBe(404);
  });

  it("answers 404 before 403, and 403 naming identity.<id>.read_identity", async () => {
    const creator = s.as(await s.seed.rootKey(["identity.*.create_identity"]));
    const missing = await refusal(creator.identities.getIdentity({ identity: "nobody" }));
    expect(missing.status).toBe(404);
    const { id } = await s.seed.identity();
    const r = await refusal(creator.identities.getIdentity({ identity: id }));
    expect(r.code).toBe(Code.PermissionDenied);
    expect(r.status).toBe(403);
    expect(r.detail).toContain(`identity.${id}.read_identity`);
    const narrow = s.as(await s.seed.rootKey([`identity.${id}.read_identity`]));
    expect((await narrow.identities.getIdentity({ identity: id })).data?.id).toBe(id);
  });
});

describe("identities.getIdentity credits", () => {
  it("shows the pool with its refill, a due refill applied, and omits an unlimited one", async () => {
    s.clock.set(Date.parse("2026-11-01T12:00:00Z"));
    const externalId = `pool_get_${Date.now()}`;
    await s.api.identities.createIdentity({
      externalId,
      credits: {
        remaining: 2n,
        refill: { interval: RefillInterval.MONTHLY, amount: 50n, refillDay: 15 },
      },
    });
    const got = await s.api.identities.getIdentity({ externalId });
    expect(got.data?.credits).toMatchObject({
      remaining: 2n,
      refill: { interval: RefillInterval.MONTHLY, amount: 50n, refillDay: 15 },
    });
    s.clock.set(Date.parse("2026-11-15T00:00:00Z"));
    expect((await s.api.identities.getIdentity({ externalId })).data?.credits?.remaining).toBe(50n);
    const plain = await s.seed.identity();
    expect(
      (await s.api.identities.getIdentity({ identity: plain.id })).data?.credits,
    ).toBeUndefined();
  });
});
