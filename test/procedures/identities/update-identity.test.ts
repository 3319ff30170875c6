import { describe, expect, it } from "vitest";
import { currentEngine } from "../../harness/engine.js";
import { DOORS, useServer } from "../../harness/server.js";

const s = useServer();
const limit = (name: string, extra: Record<string, unknown> = {}) => ({
  name,
  limit: 10,
  duration: 60000,
  ...extra,
});

async function made(door: (typeof DOORS)[number], body: Record<string, unknown> = {}) {
  const externalId = `chg_${Math.random().toString(36).slice(2)}`;
  const res = await s.call(door, "identities.createIdentity", { externalId, ...body });
  expect(res.status).toBe(200);
  return { id: res.data.identityId as string, externalId };
}

describe.each(DOORS)("identities.updateIdentity via %s", (door) => {
  describe("ok", () => {
    it("leaves omitted fields alone", async () => {
      const { id } = await made(door, { meta: { a: 1 }, ratelimits: [limit("reqs")] });
      const res = await s.call(door, "identities.updateIdentity", { identity: id, meta: { b: 2 } });
      expect(res.status).toBe(200);
      expect(res.data.meta).toEqual({ b: 2 });
      expect(res.data.ratelimits).toHaveLength(1);
    });

    it("clears meta with null and with {}, and rate limits with null and with []", async () => {
      for (const [meta, ratelimits] of [
        [null, null],
        [{}, []],
      ]) {
        const { externalId } = await made(door, { meta: { a: 1 }, ratelimits: [limit("reqs")] });
        const res = await s.call(door, "identities.updateIdentity", {
          externalId,
          meta,
          ratelimits,
        });
        expect(res.status).toBe(200);
        expect(res.data.meta).toBeUndefined();
        expect(res.data.ratelimits).toBeUndefined();
        const got = await s.call(door, "identities.getIdentity", { externalId });
        expect(Object.keys(got.data).sort()).toEqual(["externalId", "id"]);
      }
    });

    it("replaces rate limits by name: kept names keep their id, others come and go", async () => {
      const { id } = await made(door, { ratelimits: [limit("keep"), limit("drop")] });
      const before = (await s.call(door, "identities.getIdentity", { identity: id })).data
        .ratelimits;
      const keepId = before.find((r: { name: string }) => r.name === "keep").id;
      const res = await s.call(door, "identities.updateIdentity", {
        identity: id,
        ratelimits: [limit("keep", { limit: 99 }), limit("new", { autoApply: false })],
      });
      expect(res.data.ratelimits).toEqual([
        { id: keepId, name: "keep", limit: 99, duration: 60000, autoApply: true },
        {
          id: expect.stringMatching(/^rl_/),
          name: "new",
          limit: 10,
          duration: 60000,
          autoApply: false,
        },
      ]);
      const audit = await s.db.query<{ event: string }>(
        "select event from audit_logs where request_id = $1 order by event",
        [res.requestId],
      );
      expect(audit.map((a) => a.event)).toEqual([
        "identity.update",
        "ratelimit.create",
        "ratelimit.delete",
        "ratelimit.update",
      ]);
    });

    it("changes nothing and writes nothing for a body that names only the identity", async () => {
      const { id } = await made(door, { meta: { a: 1 } });
      const before = await s.snapshot();
      const res = await s.call(door, "identities.updateIdentity", { identity: id });
      expect(res.data.meta).toEqual({ a: 1 });
      expect(await s.changesSince(before)).toEqual({});
    });
  });

  describe("invalid input", () => {
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
      const res = await s.call(door, "identities.updateIdentity", body);
      expect(res.status).toBe(400);
      expect(res.error?.errors?.[0]?.location).toBe(location);
      expect(await s.changesSince(before)).toEqual({});
    });
  });

  describe("not found and permissions", () => {
    it("answers an unknown, deleted or foreign identity with 404", async () => {
      const deleted = await made(door);
      await s.call(door, "identities.deleteIdentity", { identity: deleted.id });
      const foreign = await s.seed.identity({ workspaceId: await s.seed.workspace() });
      for (const identity of ["nobody", deleted.id, foreign.id]) {
        const res = await s.call(door, "identities.updateIdentity", { identity, meta: { a: 1 } });
        expect(res.status).toBe(404);
        expect(res.error?.code).toBe("err:svc:data:identity_not_found");
      }
    });

    it("answers 403 naming identity.<id>.update_identity", async () => {
      const { id } = await made(door);
      const key = await s.seed.rootKey(["identity.*.read_identity"]);
      const res = await s.call(
        door,
        "identities.updateIdentity",
        { identity: id, meta: { a: 1 } },
        key,
      );
      expect(res.status).toBe(403);
      expect(res.error?.detail).toContain(`identity.${id}.update_identity`);
    });
  });
});

describe.each(DOORS)("identities.deleteIdentity via %s", (door) => {
  it("soft-deletes: 200 with data {}, then 404, audited with its rate limits", async () => {
    const { id, externalId } = await made(door, { ratelimits: [limit("reqs")] });
    const res = await s.call(door, "identities.deleteIdentity", { externalId });
    expect(res.status).toBe(200);
    expect(res.data).toEqual({});
    expect((await s.call(door, "identities.getIdentity", { identity: id })).status).toBe(404);
    expect((await s.call(door, "identities.deleteIdentity", { identity: id })).status).toBe(404);
    const row = await s.db.query<{ deleted_at: number }>(
      "select deleted_at from identities where id = $1",
      [id],
    );
    expect(row[0]?.deleted_at).toBe(s.clock.now());
    const audit = await s.db.query<{ event: string }>(
      "select event from audit_logs where request_id = $1 order by event",
      [res.requestId],
    );
    expect(audit.map((a) => a.event)).toEqual(["identity.delete", "ratelimit.delete"]);
  });

  it("answers 403 naming identity.<id>.delete_identity, and leaves the identity", async () => {
    const { id } = await made(door);
    const key = await s.seed.rootKey(["identity.*.read_identity"]);
    const before = await s.snapshot();
    const res = await s.call(door, "identities.deleteIdentity", { identity: id }, key);
    expect(res.status).toBe(403);
    expect(res.error?.detail).toContain(`identity.${id}.delete_identity`);
    expect(await s.changesSince(before)).toEqual({});
  });

  it("cannot delete another workspace's identity", async () => {
    const foreign = await s.seed.identity({ workspaceId: await s.seed.workspace() });
    expect((await s.call(door, "identities.deleteIdentity", { identity: foreign.id })).status).toBe(
      404,
    );
  });
});

describe.skipIf(currentEngine() !== "postgres")("concurrent identity creation", () => {
  it("lets exactly one of 20 concurrent creations with one externalId succeed", async () => {
    const externalId = `race_${Date.now()}`;
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        s.call(DOORS[i % DOORS.length] as (typeof DOORS)[number], "identities.createIdentity", {
          externalId,
        }),
      ),
    );
    const statuses = results.map((r) => r.status);
    expect(statuses.filter((x) => x === 200)).toHaveLength(1);
    expect(statuses.filter((x) => x === 409)).toHaveLength(19);
    const rows = await s.db.query("select 1 from identities where external_id = $1", [externalId]);
    expect(rows).toHaveLength(1);
  });
});
