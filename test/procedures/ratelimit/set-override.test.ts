import { describe, expect, it } from "vitest";
import { DOORS, useServer } from "../../harness/server.js";

const s = useServer();
let n = 0;
const HOUR = 3_600_000;

/** A namespace that exists (created by a first limit call). */
async function namespace(): Promise<{ name: string; id: string }> {
  const name = `ovr.${++n}`;
  await s.call("json", "ratelimit.limit", {
    namespace: name,
    identifier: "seed",
    limit: 1,
    duration: 1000,
    cost: 0,
  });
  const rows = await s.db.query<{ id: string }>(
    "select id from ratelimit_namespaces where name = $1",
    [name],
  );
  return { name, id: rows[0]?.id as string };
}

describe.each(DOORS)("ratelimit overrides via %s", (door) => {
  it("sets, gets, replaces (same id), lists and deletes an override; limit applies it", async () => {
    const ns = await namespace();
    const set = await s.call(door, "ratelimit.setOverride", {
      namespace: ns.name,
      identifier: "vip",
      limit: 5,
      duration: HOUR,
    });
    expect(set.data.overrideId).toMatch(/^rlor_/);
    const got = await s.call(door, "ratelimit.getOverride", {
      namespace: ns.id,
      identifier: "vip",
    });
    expect(got.data).toEqual({
      overrideId: set.data.overrideId,
      identifier: "vip",
      limit: 5,
      duration: HOUR,
    });
    const limited = await s.call(door, "ratelimit.limit", {
      namespace: ns.name,
      identifier: "vip",
      limit: 1,
      duration: 1000,
    });
    expect(limited.data).toMatchObject({
      success: true,
      limit: 5,
      remaining: 4,
      overrideId: set.data.overrideId,
    });
    const again = await s.call(door, "ratelimit.setOverride", {
      namespace: ns.name,
      identifier: "vip",
      limit: 9,
      duration: HOUR,
    });
    expect(again.data.overrideId).toBe(set.data.overrideId);
    expect(
      (await s.call(door, "ratelimit.getOverride", { namespace: ns.name, identifier: "vip" })).data
        .limit,
    ).toBe(9);
    const list = await s.call(door, "ratelimit.listOverrides", { namespace: ns.name });
    expect(list.data.map((o: { identifier: string }) => o.identifier)).toEqual(["vip"]);
    expect(list.pagination).toEqual({ hasMore: false });
    expect(
      (await s.call(door, "ratelimit.deleteOverride", { namespace: ns.name, identifier: "vip" }))
        .data,
    ).toEqual({});
    expect(
      (await s.call(door, "ratelimit.getOverride", { namespace: ns.name, identifier: "vip" }))
        .status,
    ).toBe(404);
    const revived = await s.call(door, "ratelimit.setOverride", {
      namespace: ns.name,
      identifier: "vip",
      limit: 2,
      duration: HOUR,
    });
    expect(revived.data.overrideId).toBe(set.data.overrideId);
    expect(
      (await s.call(door, "ratelimit.getOverride", { namespace: ns.name, identifier: "vip" })).data
        .limit,
    ).toBe(2);
  });

  it("matches exact first, else the most specific wildcard; limit 0 always denies", async () => {
    const ns = await namespace();
    const set = (identifier: string, limit: number) =>
      s.call(door, "ratelimit.setOverride", {
        namespace: ns.name,
        identifier,
        limit,
        duration: HOUR,
      });
    const any = (await set("*", 100)).data.overrideId;
    const users = (await set("user_*", 10)).data.overrideId;
    const blocked = (await set("user_bad*", 0)).data.overrideId;
    const one = (await set("user_42", 1)).data.overrideId;
    const get = async (identifier: string) =>
      (await s.call(door, "ratelimit.getOverride", { namespace: ns.name, identifier })).data
        .overrideId;
    expect(await get("user_42")).toBe(one);
    expect(await get("user_7")).toBe(users);
    expect(await get("user_badguy")).toBe(blocked);
    expect(await get("anyone")).toBe(any);
    const denied = await s.call(door, "ratelimit.limit", {
      namespace: ns.name,
      identifier: "user_badguy",
      limit: 1000,
      duration: 1000,
      cost: 0,
    });
    expect(denied.data).toMatchObject({
      success: false,
      limit: 0,
      remaining: 0,
      overrideId: blocked,
    });
  });

  it("pages through overrides by id", async () => {
    const ns = await namespace();
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      ids.push(
        (
          await s.call(door, "ratelimit.setOverride", {
            namespace: ns.name,
            identifier: `p${i}`,
            limit: 1,
            duration: 1000,
          })
        ).data.overrideId,
      );
    }
    ids.sort();
    const first = await s.call(door, "ratelimit.listOverrides", { namespace: ns.name, limit: 2 });
    expect(first.data.map((o: { overrideId: string }) => o.overrideId)).toEqual(ids.slice(0, 2));
    expect(first.pagination).toEqual({ cursor: ids[2], hasMore: true });
    const rest = await s.call(door, "ratelimit.listOverrides", {
      namespace: ns.name,
      limit: 10,
      cursor: first.pagination?.cursor,
    });
    expect(rest.data.map((o: { overrideId: string }) => o.overrideId)).toEqual(ids.slice(2));
  });

  it("answers unknown namespaces and overrides with 404, and does not create namespaces", async () => {
    const bodies: [string, Record<string, unknown>][] = [
      ["ratelimit.setOverride", { identifier: "x", limit: 1, duration: 1000 }],
      ["ratelimit.getOverride", { identifier: "x" }],
      ["ratelimit.listOverrides", {}],
      ["ratelimit.deleteOverride", { identifier: "x" }],
    ];
    for (const [proc, body] of bodies) {
      const ghost = `ghost.${++n}`;
      const res = await s.call(door, proc, { namespace: ghost, ...body });
      expect(res.status, proc).toBe(404);
      expect(res.error?.code).toBe("err:svc:data:ratelimit_namespace_not_found");
      expect(
        await s.db.query("select 1 from ratelimit_namespaces where name = $1", [ghost]),
      ).toEqual([]);
    }
    const ns = await namespace();
    for (const proc of ["ratelimit.getOverride", "ratelimit.deleteOverride"]) {
      const res = await s.call(door, proc, { namespace: ns.name, identifier: "nobody" });
      expect(res.error?.code).toBe("err:svc:data:ratelimit_override_not_found");
    }
    const foreign = await s.seed.rootKey(["*.*.*"], await s.seed.workspace());
    expect(
      (
        await s.call(
          door,
          "ratelimit.getOverride",
          { namespace: ns.name, identifier: "x" },
          foreign,
        )
      ).status,
    ).toBe(404);
  });

  it("needs set_override, read_override and delete_override on the namespace", async () => {
    const ns = await namespace();
    await s.call(door, "ratelimit.setOverride", {
      namespace: ns.name,
      identifier: "perm",
      limit: 1,
      duration: 1000,
    });
    const reader = await s.seed.rootKey([`ratelimit.${ns.id}.read_override`]);
    expect(
      (
        await s.call(
          door,
          "ratelimit.getOverride",
          { namespace: ns.name, identifier: "perm" },
          reader,
        )
      ).status,
    ).toBe(200);
    const set = await s.call(
      door,
      "ratelimit.setOverride",
      { namespace: ns.name, identifier: "x", limit: 1, duration: 1000 },
      reader,
    );
    expect(set.error?.detail).toContain(`ratelimit.${ns.id}.set_override`);
    const del = await s.call(
      door,
      "ratelimit.deleteOverride",
      { namespace: ns.name, identifier: "perm" },
      reader,
    );
    expect(del.error?.detail).toContain(`ratelimit.${ns.id}.delete_override`);
  });

  it.each([
    [{ namespace: "x", identifier: "u", limit: -1, duration: 1000 }, "/limit"],
    [{ namespace: "x", identifier: "u", limit: 1, duration: 999 }, "/duration"],
    [{ namespace: "x", identifier: "", limit: 1, duration: 1000 }, "/identifier"],
  ])("rejects setOverride %j with 400", async (body, location) => {
    const res = await s.call(door, "ratelimit.setOverride", body);
    expect(res.status).toBe(400);
    expect(res.error?.errors?.[0]?.location).toBe(location);
  });
});

describe("the namespace cache", () => {
  it("answers a namespace's id with that namespace, even when another is named like it", async () => {
    const alpha = await namespace();
    // Another namespace whose name is alpha's id (names are free text).
    const twinId = `rlns_twin${++n}`;
    await s.db.query(
      "insert into ratelimit_namespaces (id, workspace_id, name, created_at) values ($1, $2, $3, $4)",
      [twinId, s.workspaceId, alpha.id, Date.now()],
    );
    // Look the twin up by its id, then alpha by its id: the database prefers the id.
    await s.call("json", "ratelimit.limit", {
      namespace: twinId,
      identifier: "u",
      limit: 5,
      duration: HOUR,
    });
    const set = await s.call("json", "ratelimit.setOverride", {
      namespace: alpha.id,
      identifier: "vip",
      limit: 3,
      duration: HOUR,
    });
    expect(set.status).toBe(200);
    const got = await s.call("json", "ratelimit.getOverride", {
      namespace: alpha.name,
      identifier: "vip",
    });
    expect(got.data).toMatchObject({ limit: 3 });
  });
});
