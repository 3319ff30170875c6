import type { MessageInitShape } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import type { SetOverrideRequestSchema } from "../../../gen/latchkey/v2/ratelimit_pb.js";
import { useServer } from "../../harness/server.js";
import { refusal } from "../../harness/typed.js";
import { auditEventsOf, newNamespace } from "./namespace.js";

// ratelimit.setOverride: gives an identifier (or a `*` pattern) of an existing namespace its
// own limit and window; setting it again replaces it under the same id, and a deleted one is
// revived with its id.

const s = useServer();
let n = 0;
const HOUR = 3_600_000n;

type SetOverride = MessageInitShape<typeof SetOverrideRequestSchema>;

describe("ratelimit.setOverride", () => {
  it("creates an override under an rlor_ id, audited, that getOverride reads back", async () => {
    const ns = await newNamespace(s);
    const set = await s.api.ratelimit.setOverride({
      namespace: ns.name,
      identifier: "vip",
      limit: 5n,
      duration: HOUR,
    });
    const overrideId = set.data?.overrideId as string;
    expect(overrideId).toMatch(/^rlor_/);
    const got = await s.api.ratelimit.getOverride({ namespace: ns.id, identifier: "vip" });
    expect(got.data).toMatchObject({ overrideId, identifier: "vip", limit: 5n, duration: HOUR });
    expect(await auditEventsOf(s, overrideId)).toEqual(["ratelimit.set_override"]);
  });

  it("replaces an identifier's override under the same id, and revives a deleted one", async () => {
    const ns = await newNamespace(s);
    const set = (limit: bigint) =>
      s.api.ratelimit.setOverride({ namespace: ns.name, identifier: "vip", limit, duration: HOUR });
    const limitOf = async () =>
      (await s.api.ratelimit.getOverride({ namespace: ns.name, identifier: "vip" })).data?.limit;
    const first = (await set(5n)).data?.overrideId as string;
    expect((await set(9n)).data?.overrideId).toBe(first);
    expect(await limitOf()).toBe(9n);
    await s.api.ratelimit.deleteOverride({ namespace: ns.name, identifier: "vip" });
    expect((await set(2n)).data?.overrideId).toBe(first);
    expect(await limitOf()).toBe(2n);
    const listed = await s.api.ratelimit.listOverrides({ namespace: ns.name });
    expect(listed.data.map((o) => o.overrideId)).toEqual([first]);
    expect(await auditEventsOf(s, first)).toEqual([
      "ratelimit.set_override",
      "ratelimit.set_override",
      "ratelimit.delete_override",
      "ratelimit.set_override",
    ]);
  });

  it("answers an unknown namespace with 404 and does not create it", async () => {
    const ghost = `ghost.${++n}`;
    const r = await refusal(
      s.api.ratelimit.setOverride({
        namespace: ghost,
        identifier: "x",
        limit: 1n,
        duration: 1000n,
      }),
    );
    expect(r.code).toBe(Code.NotFound);
    expect(r).toMatchObject({
      status: 404,
      errorCode: "err:svc:data:ratelimit_namespace_not_found",
    });
    expect(await s.db.query("select 1 from ratelimit_namespaces where name = $1", [ghost])).toEqual(
      [],
    );
  });

  it("needs ratelimit.<namespace>.set_override", async () => {
    const ns = await newNamespace(s);
    const reader = await s.seed.rootKey([`ratelimit.${ns.id}.read_override`]);
    const body = { namespace: ns.name, identifier: "x", limit: 1n, duration: 1000n };
    const r = await refusal(s.as(reader).ratelimit.setOverride(body));
    expect(r).toMatchObject({
      status: 403,
      errorCode: "err:svc:authorization:insufficient_permissions",
    });
    expect(r.detail).toContain(`ratelimit.${ns.id}.set_override`);
    const setter = await s.seed.rootKey([`ratelimit.${ns.id}.set_override`]);
    expect((await s.as(setter).ratelimit.setOverride(body)).data?.overrideId).toMatch(/^rlor_/);
  });

  it.each<[SetOverride, string]>([
    [{ namespace: "x", identifier: "u", limit: -1n, duration: 1000n }, "/limit"],
    [{ namespace: "x", identifier: "u", limit: 1n, duration: 999n }, "/duration"],
    [{ namespace: "x", identifier: "", limit: 1n, duration: 1000n }, "/identifier"],
  ])("rejects %o with 400 naming the field", async (body, location) => {
    const r = await refusal(s.api.ratelimit.setOverride(body));
    expect(r.code).toBe(Code.InvalidArgument);
    expect(r.status).toBe(400);
    expect(r.errors.map((e) => e.location)).toEqual([location]);
  });

  it("finds a namespace by its id even when another namespace is named like that id", async () => {
    const alpha = await newNamespace(s);
    // Another namespace whose name is alpha's id (names are free text).
    const twinId = `rlns_twin${++n}`;
    await s.db.query(
      "insert into ratelimit_namespaces (id, workspace_id, name, created_at) values ($1, $2, $3, $4)",
      [twinId, s.workspaceId, alpha.id, Date.now()],
    );
    // Look the twin up by its id first (it lands in the namespace cache), then alpha by its
    // id: the database prefers the id, and so must the cache.
    await s.api.ratelimit.limit({ namespace: twinId, identifier: "u", limit: 5n, duration: HOUR });
    await s.api.ratelimit.setOverride({
      namespace: alpha.id,
      identifier: "vip",
      limit: 3n,
      duration: HOUR,
    });
    const got = await s.api.ratelimit.getOverride({ namespace: alpha.name, identifier: "vip" });
    expect(got.data?.limit).toBe(3n);
  });
});
