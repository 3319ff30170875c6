import { Code } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { useServer } from "../../harness/server.js";
import { refusal } from "../../harness/typed.js";
import { newNamespace } from "./namespace.js";

// ratelimit.getOverride: the override that applies to an identifier in a namespace (named by
// id or name): its exact override, else the most specific matching `*` pattern.

const s = useServer();
let n = 0;
const HOUR = 3_600_000n;

describe("ratelimit.getOverride", () => {
  it("reads an override by the namespace's id or name", async () => {
    const ns = await newNamespace(s);
    const set = await s.api.ratelimit.setOverride({
      namespace: ns.name,
      identifier: "vip",
      limit: 5n,
      duration: HOUR,
    });
    const expected = {
      overrideId: set.data?.overrideId,
      identifier: "vip",
      limit: 5n,
      duration: HOUR,
    };
    for (const namespace of [ns.id, ns.name]) {
      const got = await s.api.ratelimit.getOverride({ namespace, identifier: "vip" });
      expect(got.data).toMatchObject(expected);
    }
  });

  it("matches exact first, else the most specific wildcard", async () => {
    const ns = await newNamespace(s);
    const set = async (identifier: string, limit: bigint) =>
      (
        await s.api.ratelimit.setOverride({
          namespace: ns.name,
          identifier,
          limit,
          duration: HOUR,
        })
      ).data?.overrideId;
    const any = await set("*", 100n);
    const users = await set("user_*", 10n);
    const blocked = await set("user_bad*", 0n);
    const one = await set("user_42", 1n);
    const get = async (identifier: string) =>
      (await s.api.ratelimit.getOverride({ namespace: ns.name, identifier })).data;
    expect(await get("user_42")).toMatchObject({ overrideId: one, identifier: "user_42" });
    expect(await get("user_7")).toMatchObject({ overrideId: users, identifier: "user_*" });
    expect(await get("user_badguy")).toMatchObject({ overrideId: blocked, limit: 0n });
    expect(await get("anyone")).toMatchObject({ overrideId: any, identifier: "*" });
  });

  it("answers an unknown namespace or identifier with 404, and creates no namespace", async () => {
    const ghost = `ghost.${++n}`;
    const noNamespace = await refusal(
      s.api.ratelimit.getOverride({ namespace: ghost, identifier: "x" }),
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
    const noOverride = await refusal(
      s.api.ratelimit.getOverride({ namespace: ns.name, identifier: "nobody" }),
    );
    expect(noOverride).toMatchObject({
      status: 404,
      errorCode: "err:svc:data:ratelimit_override_not_found",
    });
  });

  it("answers another workspace's namespace with 404", async () => {
    const ns = await newNamespace(s);
    await s.api.ratelimit.setOverride({
      namespace: ns.name,
      identifier: "x",
      limit: 1n,
      duration: HOUR,
    });
    const foreign = await s.seed.rootKey(["*.*.*"], await s.seed.workspace());
    for (const namespace of [ns.name, ns.id]) {
      const r = await refusal(s.as(foreign).ratelimit.getOverride({ namespace, identifier: "x" }));
      expect(r).toMatchObject({
        status: 404,
        errorCode: "err:svc:data:ratelimit_namespace_not_found",
      });
    }
  });

  it("needs ratelimit.<namespace>.read_override", async () => {
    const ns = await newNamespace(s);
    await s.api.ratelimit.setOverride({
      namespace: ns.name,
      identifier: "perm",
      limit: 1n,
      duration: 1000n,
    });
    const body = { namespace: ns.name, identifier: "perm" };
    const reader = await s.seed.rootKey([`ratelimit.${ns.id}.read_override`]);
    expect((await s.as(reader).ratelimit.getOverride(body)).data?.identifier).toBe("perm");
    const setter = await s.seed.rootKey([`ratelimit.${ns.id}.set_override`]);
    const r = await refusal(s.as(setter).ratelimit.getOverride(body));
    expect(r).toMatchObject({
      status: 403,
      errorCode: "err:svc:authorization:insufficient_permissions",
    });
    expect(r.detail).toContain(`ratelimit.${ns.id}.read_override`);
  });
});
