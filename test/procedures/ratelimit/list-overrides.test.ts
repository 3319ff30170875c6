import { Code } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { useServer } from "../../harness/server.js";
import { refusal } from "../../harness/typed.js";
import { newNamespace } from "./namespace.js";

// ratelimit.listOverrides: one page of a namespace's live overrides, by id.

const s = useServer();
let n = 0;
const HOUR = 3_600_000n;

/** A namespace with these identifiers' overrides; returns it and the override ids, sorted. */
async function namespaceWith(identifiers: string[]) {
  const ns = await newNamespace(s);
  const ids: string[] = [];
  for (const identifier of identifiers) {
    const set = await s.api.ratelimit.setOverride({
      namespace: ns.name,
      identifier,
      limit: 1n,
      duration: 1000n,
    });
    ids.push(set.data?.overrideId as string);
  }
  return { ...ns, ids: ids.sort() };
}

describe("ratelimit.listOverrides", () => {
  it("lists the namespace's overrides with their limits, and no more once deleted", async () => {
    const ns = await namespaceWith([]);
    await s.api.ratelimit.setOverride({
      namespace: ns.name,
      identifier: "vip",
      limit: 9n,
      duration: HOUR,
    });
    const list = await s.api.ratelimit.listOverrides({ namespace: ns.id });
    expect(list.data).toEqual([
      expect.objectContaining({ identifier: "vip", limit: 9n, duration: HOUR }),
    ]);
    expect(list.pagination).toMatchObject({ hasMore: false });
    expect(list.pagination?.cursor).toBeUndefined();
    await s.api.ratelimit.deleteOverride({ namespace: ns.name, identifier: "vip" });
    expect((await s.api.ratelimit.listOverrides({ namespace: ns.name })).data).toEqual([]);
  });

  it("pages through overrides by id", async () => {
    const ns = await namespaceWith(["p0", "p1", "p2", "p3", "p4"]);
    const first = await s.api.ratelimit.listOverrides({ namespace: ns.name, limit: 2 });
    expect(first.data.map((o) => o.overrideId)).toEqual(ns.ids.slice(0, 2));
    expect(first.pagination).toMatchObject({ cursor: ns.ids[2], hasMore: true });
    const rest = await s.api.ratelimit.listOverrides({
      namespace: ns.name,
      limit: 10,
      cursor: first.pagination?.cursor,
    });
    expect(rest.data.map((o) => o.overrideId)).toEqual(ns.ids.slice(2));
    expect(rest.pagination?.hasMore).toBe(false);
  });

  it("answers an unknown namespace with 404 and does not create it", async () => {
    const ghost = `ghost.${++n}`;
    const r = await refusal(s.api.ratelimit.listOverrides({ namespace: ghost }));
    expect(r.code).toBe(Code.NotFound);
    expect(r).toMatchObject({
      status: 404,
      errorCode: "err:svc:data:ratelimit_namespace_not_found",
    });
    expect(await s.db.query("select 1 from ratelimit_namespaces where name = $1", [ghost])).toEqual(
      [],
    );
  });

  it("needs ratelimit.<namespace>.read_override", async () => {
    const ns = await namespaceWith(["a"]);
    const reader = await s.seed.rootKey([`ratelimit.${ns.id}.read_override`]);
    expect((await s.as(reader).ratelimit.listOverrides({ namespace: ns.name })).data).toHaveLength(
      1,
    );
    const setter = await s.seed.rootKey([`ratelimit.${ns.id}.set_override`]);
    const r = await refusal(s.as(setter).ratelimit.listOverrides({ namespace: ns.name }));
    expect(r).toMatchObject({
      status: 403,
      errorCode: "err:svc:authorization:insufficient_permissions",
    });
    expect(r.detail).toContain(`ratelimit.${ns.id}.read_override`);
  });
});
