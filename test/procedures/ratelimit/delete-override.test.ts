import { Code } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { useServer } from "../../harness/server.js";
import { refusal } from "../../harness/typed.js";
import { auditEventsOf, newNamespace } from "./namespace.js";

// ratelimit.deleteOverride: deletes the override with exactly this identifier (a pattern is
// matched literally, not as a wildcard), audited; limits fall back to the request's own.

const s = useServer();
let n = 0;
const HOUR = 3_600_000n;

describe("ratelimit.deleteOverride", () => {
  it("deletes the override: getOverride answers 404 and limit uses the request's limit", async () => {
    const ns = await newNamespace(s);
    const set = await s.api.ratelimit.setOverride({
      namespace: ns.name,
      identifier: "vip",
      limit: 5n,
      duration: HOUR,
    });
    const overrideId = set.data?.overrideId as string;
    // Read first, so a cached copy of the namespace would have to be dropped by the delete.
    const seen = await s.api.ratelimit.getOverride({ namespace: ns.name, identifier: "vip" });
    expect(seen.data?.overrideId).toBe(overrideId);
    const deleted = await s.api.ratelimit.deleteOverride({ namespace: ns.id, identifier: "vip" });
    expect(deleted.data).toBeDefined();
    const gone = await refusal(
      s.api.ratelimit.getOverride({ namespace: ns.name, identifier: "vip" }),
    );
    expect(gone.errorCode).toBe("err:svc:data:ratelimit_override_not_found");
    const limited = await s.api.ratelimit.limit({
      namespace: ns.name,
      identifier: "vip",
      limit: 2n,
      duration: HOUR,
    });
    expect(limited.data).toMatchObject({ limit: 2n, remaining: 1n });
    expect(limited.data?.overrideId).toBeUndefined();
    expect(await auditEventsOf(s, overrideId)).toEqual([
      "ratelimit.set_override",
      "ratelimit.delete_override",
    ]);
  });

  it("deletes a pattern only when named literally", async () => {
    const ns = await newNamespace(s);
    await s.api.ratelimit.setOverride({
      namespace: ns.name,
      identifier: "user_*",
      limit: 1n,
      duration: HOUR,
    });
    const r = await refusal(
      s.api.ratelimit.deleteOverride({ namespace: ns.name, identifier: "user_1" }),
    );
    expect(r.errorCode).toBe("err:svc:data:ratelimit_override_not_found");
    await s.api.ratelimit.deleteOverride({ namespace: ns.name, identifier: "user_*" });
    expect((await s.api.ratelimit.listOverrides({ namespace: ns.name })).data).toEqual([]);
  });

  it("answers an unknown namespace or identifier with 404, and creates no namespace", async () => {
    const ghost = `ghost.${++n}`;
    const noNamespace = await refusal(
      s.api.ratelimit.deleteOverride({ namespace: ghost, identifier: "x" }),
    );
    expect(noNamespace.code).toBe(Code.NotFound);
    expect(noNamespace).toMatchObject({
      status: 404,
      errorCode: "err:svc:data:ratelimit_namespace_not_found",
    });
    expect(await s.db.query("select 1 from ratelimit_namespaces where name = $1", [ghost])).toEqual(
      [],
    );
    const ns = await newNamespace(s);
    const before = await s.snapshot();
    const noOverride = await refusal(
      s.api.ratelimit.deleteOverride({ namespace: ns.name, identifier: "nobody" }),
    );
    expect(noOverride).toMatchObject({
      status: 404,
      errorCode: "err:svc:data:ratelimit_override_not_found",
    });
    expect(await s.changesSince(before)).toEqual({});
  });

  it("needs ratelimit.<namespace>.delete_override", async () => {
    const ns = await newNamespace(s);
    await s.api.ratelimit.setOverride({
      namespace: ns.name,
      identifier: "perm",
      limit: 1n,
      duration: 1000n,
    });
    const body = { namespace: ns.name, identifier: "perm" };
    const reader = await s.seed.rootKey([`ratelimit.${ns.id}.read_override`]);
    const r = await refusal(s.as(reader).ratelimit.deleteOverride(body));
    expect(r).toMatchObject({
      status: 403,
      errorCode: "err:svc:authorization:insufficient_permissions",
    });
    expect(r.detail).toContain(`ratelimit.${ns.id}.delete_override`);
    expect((await s.api.ratelimit.getOverride(body)).data?.identifier).toBe("perm");
    const deleter = await s.seed.rootKey([`ratelimit.${ns.id}.delete_override`]);
    await s.as(deleter).ratelimit.deleteOverride(body);
    expect((await refusal(s.api.ratelimit.getOverride(body))).status).toBe(404);
  });
});
