import { describe, expect, it } from "vitest";
import { DOORS, useServer } from "../../harness/server.js";

const s = useServer();

describe.each(DOORS)("identities.getIdentity via %s", (door) => {
  it("finds an identity by id, by externalId in `identity`, and by `externalId`", async () => {
    const { id, externalId } = await s.seed.identity();
    for (const body of [{ identity: id }, { identity: externalId }, { externalId }]) {
      const res = await s.call(door, "identities.getIdentity", body);
      expect(res.status).toBe(200);
      expect(res.data).toEqual({ id, externalId });
    }
  });

  it("matches an id before an externalId", async () => {
    const target = await s.seed.identity();
    // Another identity whose externalId equals the first one's id.
    await s.seed.identity({ externalId: target.id });
    const res = await s.call(door, "identities.getIdentity", { identity: target.id });
    expect(res.data.id).toBe(target.id);
  });

  it("does not treat an id as an externalId when `externalId` is given", async () => {
    const { id } = await s.seed.identity();
    expect((await s.call(door, "identities.getIdentity", { externalId: id })).status).toBe(404);
  });

  it.each([
    ["neither identity nor externalId", {}, "/identity", /give one of identity, externalId/],
    ["both identity and externalId", { identity: "a", externalId: "a" }, "/externalId", /together/],
    ["an empty identity", { identity: "" }, "/identity", /at least 1/],
  ])("rejects %s with 400", async (_, body, location, message) => {
    const res = await s.call(door, "identities.getIdentity", body);
    expect(res.status).toBe(400);
    expect(res.error?.errors).toEqual([{ location, message: expect.stringMatching(message) }]);
  });

  it.each([
    ["unknown", "nobody_here"],
    ["malformed", "no such / id"],
  ])("answers an %s identity with 404", async (_, identity) => {
    const res = await s.call(door, "identities.getIdentity", { identity });
    expect(res.status).toBe(404);
    expect(res.error?.code).toBe("err:svc:data:identity_not_found");
  });

  it("answers a deleted identity with 404", async () => {
    const { id } = await s.seed.identity();
    expect((await s.call(door, "identities.deleteIdentity", { identity: id })).status).toBe(200);
    expect((await s.call(door, "identities.getIdentity", { identity: id })).status).toBe(404);
  });

  it("does not reveal another workspace's identity", async () => {
    const { id, externalId } = await s.seed.identity({ workspaceId: await s.seed.workspace() });
    expect((await s.call(door, "identities.getIdentity", { identity: id })).status).toBe(404);
    expect((await s.call(door, "identities.getIdentity", { externalId })).status).toBe(404);
  });

  it("answers 404 before 403, and 403 naming identity.<id>.read_identity", async () => {
    const key = await s.seed.rootKey(["identity.*.create_identity"]);
    expect((await s.call(door, "identities.getIdentity", { identity: "nobody" }, key)).status).toBe(
      404,
    );
    const { id } = await s.seed.identity();
    const res = await s.call(door, "identities.getIdentity", { identity: id }, key);
    expect(res.status).toBe(403);
    expect(res.error?.detail).toContain(`identity.${id}.read_identity`);
    const narrow = await s.seed.rootKey([`identity.${id}.read_identity`]);
    expect((await s.call(door, "identities.getIdentity", { identity: id }, narrow)).status).toBe(
      200,
    );
  });
});

describe.each(DOORS)("identities.listIdentities via %s", (door) => {
  it("pages through the workspace's identities by id, each exactly once", async () => {
    const ws = await s.seed.workspace();
    const key = await s.seed.rootKey(["identity.*.read_identity"], ws);
    const made = new Set<string>();
    for (let i = 0; i < 250; i++) made.add((await s.seed.identity({ workspaceId: ws })).id);
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    for (;;) {
      const res = await s.call(
        door,
        "identities.listIdentities",
        { limit: 100, ...(cursor ? { cursor } : {}) },
        key,
      );
      expect(res.status).toBe(200);
      pages++;
      seen.push(...res.data.map((i: { id: string }) => i.id));
      if (!res.pagination?.hasMore) {
        expect(res.pagination).toEqual({ hasMore: false });
        break;
      }
      cursor = res.pagination.cursor;
    }
    expect(pages).toBe(3);
    expect(seen).toHaveLength(250);
    expect(new Set(seen)).toEqual(made);
    expect([...seen].sort()).toEqual(seen);
  });

  it("defaults to 100 per page, leaves out deleted identities and other workspaces", async () => {
    const ws = await s.seed.workspace();
    const key = await s.seed.rootKey(["identity.*.*"], ws);
    const a = await s.seed.identity({ workspaceId: ws });
    const b = await s.seed.identity({ workspaceId: ws });
    await s.seed.identity();
    expect((await s.call(door, "identities.deleteIdentity", { identity: b.id }, key)).status).toBe(
      200,
    );
    const res = await s.call(door, "identities.listIdentities", {}, key);
    expect(res.data.map((i: { id: string }) => i.id)).toEqual([a.id]);
    expect(res.pagination).toEqual({ hasMore: false });
  });

  it("searches ids and externalIds case-insensitively, with LIKE characters taken literally", async () => {
    const ws = await s.seed.workspace();
    const key = await s.seed.rootKey(["identity.*.read_identity"], ws);
    const hit = await s.seed.identity({ workspaceId: ws, externalId: "Alice_Smith" });
    await s.seed.identity({ workspaceId: ws, externalId: "AliceXSmith" });
    const res = await s.call(door, "identities.listIdentities", { search: "  ice_s " }, key);
    expect(res.data.map((i: { id: string }) => i.id)).toEqual([hit.id]);
  });

  it("answers an empty page for a garbage cursor", async () => {
    const res = await s.call(door, "identities.listIdentities", { cursor: "zzzz" });
    expect(res).toMatchObject({ status: 200, data: [], pagination: { hasMore: false } });
  });

  it.each([
    [{ limit: 0 }, "/limit"],
    [{ limit: 101 }, "/limit"],
    [{ search: "x".repeat(257) }, "/search"],
  ])("rejects %j with 400", async (body, location) => {
    const res = await s.call(door, "identities.listIdentities", body);
    expect(res.status).toBe(400);
    expect(res.error?.errors?.[0]?.location).toBe(location);
  });

  it("needs read_identity on some identity, else 403 naming identity.*.read_identity", async () => {
    const key = await s.seed.rootKey(["identity.*.update_identity"]);
    const res = await s.call(door, "identities.listIdentities", {}, key);
    expect(res.status).toBe(403);
    expect(res.error?.detail).toContain("identity.*.read_identity");
    // A grant on one identity lists that identity only (test/security/narrow-lists.test.ts).
    const narrow = await s.seed.rootKey(["identity.id_x.read_identity"]);
    const listed = await s.call(door, "identities.listIdentities", {}, narrow);
    expect(listed).toMatchObject({ status: 200, data: [], pagination: { hasMore: false } });
  });
});
