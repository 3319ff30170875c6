import { Code } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { KeyFormat, LeakPolicy } from "../../../gen/latchkey/v2/apis_pb.js";
import { VerifyKeyCode } from "../../../gen/latchkey/v2/keys_pb.js";
import { looksLikeLatchkeyKey } from "../../../src/domain/key-format.js";
import { countOf, ROUNDS, together } from "../../harness/race.js";
import { useServer } from "../../harness/server.js";
import { refusal } from "../../harness/typed.js";

// apis.updateApi: changes an API's name, key format, leak policy and network ranges. An
// omitted field is left alone; allowedCidrs null or [] (a masked empty list over gRPC) removes
// the ranges; the others cannot be cleared. Audited as api.update, answered with the API as it
// is afterwards, and seen by cached verifications at once.

const s = useServer();
const PLAIN_16 = /^sk_[1-9A-HJ-NP-Za-km-z]{19,22}$/;
const CHECKSUMMED_16 = /^sk_[1-9A-HJ-NP-Za-km-z]{28}$/;

/**
 * A snapshot once the verification events of earlier calls are written (their writer moves
 * keys' last use and the rollups in the background, which a snapshot would count as changes).
 */
async function quiet() {
  await s.app.deps.events.flush();
  return s.snapshot();
}

/** A new API through createApi with these settings; its id. */
async function apiWith(body: { allowedCidrs?: string[]; keyFormat?: KeyFormat } = {}) {
  return (await s.api.apis.createApi({ name: "before", ...body })).data?.apiId as string;
}

/** The verification outcome's name of `key` from `clientIp` (none when undefined). */
async function outcome(key: string, clientIp?: string) {
  const { data } = await s.api.keys.verifyKey({ key, ...(clientIp ? { clientIp } : {}) });
  return VerifyKeyCode[data?.code ?? VerifyKeyCode.UNSPECIFIED];
}

describe("apis.updateApi", () => {
  it("changes every setting, answers the API as it is now, and audits api.update", async () => {
    const apiId = await apiWith();
    const res = await s.api.apis.updateApi({
      apiId,
      name: "after",
      keyFormat: KeyFormat.PLAIN,
      leakPolicy: LeakPolicy.REVOKE,
      allowedCidrs: ["10.0.0.0/8", "2001:db8::/32"],
    });
    const want = {
      id: apiId,
      name: "after",
      keyFormat: KeyFormat.PLAIN,
      leakPolicy: LeakPolicy.REVOKE,
      allowedCidrs: ["10.0.0.0/8", "2001:db8::/32"],
    };
    expect(res.data).toMatchObject(want);
    expect((await s.api.apis.getApi({ apiId })).data).toMatchObject(want);
    const rows = await s.db.query("select updated_at from apis where id = $1", [apiId]);
    expect(rows).toEqual([{ updated_at: s.clock.now() }]);
    const audit = await s.db.query(
      "select event, actor_type, request_id, workspace_id, description from audit_logs where resource_id = $1 order by id",
      [apiId],
    );
    expect(audit.slice(1)).toEqual([
      {
        event: "api.update",
        actor_type: "rootkey",
        request_id: res.meta?.requestId,
        workspace_id: s.workspaceId,
        description: `Updated name, keyFormat, leakPolicy, allowedCidrs of API ${apiId}.`,
      },
    ]);
  });

  it("leaves the settings a request omits alone", async () => {
    const apiId = await apiWith({ allowedCidrs: ["10.0.0.0/8"], keyFormat: KeyFormat.PLAIN });
    const res = await s.api.apis.updateApi({ apiId, leakPolicy: LeakPolicy.NOTIFY });
    expect(res.data).toMatchObject({
      name: "before",
      keyFormat: KeyFormat.PLAIN,
      leakPolicy: LeakPolicy.NOTIFY,
      allowedCidrs: ["10.0.0.0/8"],
    });
    const named = await s.call("json", "apis.updateApi", { apiId, name: "renamed" });
    expect(named.data).toEqual({
      id: apiId,
      name: "renamed",
      keyFormat: "plain",
      leakPolicy: "notify",
      allowedCidrs: ["10.0.0.0/8"],
    });
  });

  it("/v2 removes the ranges with null or [], and answers without them", async () => {
    for (const cleared of [null, []]) {
      const apiId = await apiWith({ allowedCidrs: ["10.0.0.0/8"] });
      const res = await s.call("json", "apis.updateApi", { apiId, allowedCidrs: cleared });
      expect(res.status).toBe(200);
      expect(res.data).toEqual({
        id: apiId,
        name: "before",
        keyFormat: "checksummed",
        leakPolicy: "disable",
      });
      const rows = await s.db.query("select allowed_cidrs from apis where id = $1", [apiId]);
      expect(rows).toEqual([{ allowed_cidrs: null }]);
    }
  });

  it("removes the ranges over gRPC when the mask names them and the list is empty", async () => {
    const apiId = await apiWith({ allowedCidrs: ["10.0.0.0/8"] });
    // Without a mask an empty list says nothing: the ranges stay.
    await s.api.apis.updateApi({ apiId, name: "kept ranges" });
    expect((await s.api.apis.getApi({ apiId })).data?.allowedCidrs).toEqual(["10.0.0.0/8"]);
    const res = await s.api.apis.updateApi({ apiId, updateMask: { paths: ["allowed_cidrs"] } });
    expect(res.data?.allowedCidrs).toEqual([]);
    expect(res.data?.name).toBe("kept ranges");
  });

  it("writes nothing for a request that changes nothing, and answers the API", async () => {
    const apiId = await apiWith();
    const before = await quiet();
    const res = await s.api.apis.updateApi({ apiId });
    expect(res.data).toMatchObject({ id: apiId, name: "before" });
    expect(await s.changesSince(before)).toEqual({});
  });

  it("writes new keys in the new format; keys made before keep verifying", async () => {
    const apiId = await apiWith();
    const checksummed = (await s.api.keys.createKey({ apiId, prefix: "sk" })).data;
    expect(checksummed?.key).toMatch(CHECKSUMMED_16);
    await s.api.apis.updateApi({ apiId, keyFormat: KeyFormat.PLAIN });
    const made = (await s.api.keys.createKey({ apiId, prefix: "sk" })).data;
    const plain = made?.key as string;
    expect(plain).toMatch(PLAIN_16);
    expect(looksLikeLatchkeyKey(plain)).toBe(false);
    // Back to checksummed: a reroll of the plain key writes a checksummed one.
    await s.call("json", "apis.updateApi", { apiId, keyFormat: "checksummed" });
    const keyId = made?.keyId as string;
    const rolled = (await s.api.keys.rerollKey({ keyId, expiration: 60_000n })).data;
    expect(rolled?.key).toMatch(CHECKSUMMED_16);
    for (const key of [checksummed?.key as string, plain, rolled?.key as string]) {
      expect({ key, code: await outcome(key) }).toEqual({ key, code: "VALID" });
    }
  });

  it("applies new ranges to cached verifications at once, and their removal too", async () => {
    const apiId = await apiWith();
    const inherits = await s.seed.key({ apiId });
    const own = await s.seed.key({ apiId, allowedCidrs: ["192.0.2.0/24"] });
    // Both records are cached by these verifications.
    expect(await outcome(inherits.key, "198.51.100.1")).toBe("VALID");
    expect(await outcome(own.key, "192.0.2.1")).toBe("VALID");
    await s.api.apis.updateApi({ apiId, allowedCidrs: ["10.0.0.0/8"] });
    expect(await outcome(inherits.key, "198.51.100.1")).toBe("FORBIDDEN");
    expect(await outcome(inherits.key)).toBe("FORBIDDEN");
    expect(await outcome(inherits.key, "10.1.2.3")).toBe("VALID");
    // A key's own list replaces its API's.
    expect(await outcome(own.key, "192.0.2.1")).toBe("VALID");
    expect(await outcome(own.key, "10.1.2.3")).toBe("FORBIDDEN");
    await s.call("json", "apis.updateApi", { apiId, allowedCidrs: null });
    expect(await outcome(inherits.key, "198.51.100.1")).toBe("VALID");
    expect(await outcome(inherits.key)).toBe("VALID");
  });

  it("shows a new name through getApi at once, though getApi had cached the API", async () => {
    const apiId = await apiWith();
    expect((await s.api.apis.getApi({ apiId })).data?.name).toBe("before");
    await s.api.apis.updateApi({ apiId, name: "after" });
    expect((await s.api.apis.getApi({ apiId })).data?.name).toBe("after");
  });

  it("of an update racing a delete, answers the API or 404, and audits only what it did", async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const apiId = await apiWith();
      const [updated] = await together(
        [
          () => s.api.apis.updateApi({ apiId, name: "raced" }),
          () => s.api.apis.deleteApi({ apiId }),
        ],
        [200, 404],
      );
      const events = await s.db.query<{ event: string }>(
        "select event from audit_logs where resource_id = $1 and event <> 'api.create' order by id",
        [apiId],
      );
      const names = events.map((e) => e.event).sort();
      expect(names).toEqual(
        countOf([updated], 200) ? ["api.delete", "api.update"] : ["api.delete"],
      );
    }
  });
});

describe("apis.updateApi refusals", () => {
  it.each([
    ["a name of 2 characters", { name: "ab" }, ["/name"]],
    ["a name of 257 characters", { name: "x".repeat(257) }, ["/name"]],
    ["a range with host bits", { allowedCidrs: ["10.0.0.1/8"] }, ["/allowedCidrs/0"]],
    [
      "101 ranges",
      { allowedCidrs: Array.from({ length: 101 }, (_, i) => `10.${i}.0.0/16`) },
      ["/allowedCidrs"],
    ],
    ["an unspecified key format", { keyFormat: KeyFormat.UNSPECIFIED }, ["/keyFormat"]],
    [
      "an unspecified format and leak policy",
      { keyFormat: KeyFormat.UNSPECIFIED, leakPolicy: LeakPolicy.UNSPECIFIED },
      ["/keyFormat", "/leakPolicy"],
    ],
    ["a leak policy the enum does not have", { leakPolicy: 7 as LeakPolicy }, ["/leakPolicy"]],
    [
      "a mask naming settings that cannot be cleared, left unset",
      { updateMask: { paths: ["name", "key_format", "leak_policy"] } },
      ["/name", "/keyFormat", "/leakPolicy"],
    ],
  ])("answers %s with 400 naming the fields, and writes nothing", async (_, body, locations) => {
    const apiId = await apiWith();
    const before = await quiet();
    const r = await refusal(s.api.apis.updateApi({ apiId, ...body }));
    expect(r.code).toBe(Code.InvalidArgument);
    expect(r).toMatchObject({ status: 400, errorCode: "err:svc:application:invalid_input" });
    expect(r.errors.map((e) => e.location)).toEqual(locations);
    expect(await s.changesSince(before)).toEqual({});
  });

  it("answers /v2 nulls for settings that cannot be cleared, and unknown strings, with 400", async () => {
    const apiId = await apiWith();
    const before = await quiet();
    const res = await s.call("json", "apis.updateApi", {
      apiId,
      name: null,
      keyFormat: null,
      leakPolicy: "delete",
    });
    expect(res.status).toBe(400);
    expect(res.error?.errors).toEqual([
      { location: "/name", message: "must not be null" },
      { location: "/keyFormat", message: "must not be null" },
      { location: "/leakPolicy", message: expect.stringContaining("revoke, disable, notify") },
    ]);
    expect(await s.changesSince(before)).toEqual({});
  });

  it("checks the body before looking the API up: a bad body for an unknown API is 400", async () => {
    const r = await refusal(s.api.apis.updateApi({ apiId: "api_nothere", name: "ab" }));
    expect(r.status).toBe(400);
  });

  it("answers 401 without a root key", async () => {
    const apiId = await apiWith();
    const r = await refusal(s.as(null).apis.updateApi({ apiId, name: "nobody" }));
    expect(r).toMatchObject({ status: 401, errorCode: "err:svc:authentication:missing" });
  });

  it("answers 403 naming api.<apiId>.update_api and changes nothing", async () => {
    const apiId = await apiWith({ allowedCidrs: ["10.0.0.0/8"] });
    const other = await apiWith();
    for (const grants of [["api.*.read_api", "api.*.create_api"], [`api.${other}.update_api`]]) {
      const key = await s.seed.rootKey(grants);
      const before = await quiet();
      const r = await refusal(
        s.as(key).apis.updateApi({ apiId, updateMask: { paths: ["allowed_cidrs"] } }),
      );
      expect(r.code).toBe(Code.PermissionDenied);
      expect(r).toMatchObject({
        status: 403,
        errorCode: "err:svc:authorization:insufficient_permissions",
      });
      expect(r.detail).toContain(`api.${apiId}.update_api`);
      expect(await s.changesSince(before)).toEqual({});
    }
  });

  it.each(["api.{apiId}.update_api", "api.*.update_api", "api.*.*"])(
    "accepts a key granted %s",
    async (grant) => {
      const apiId = await apiWith();
      const key = await s.seed.rootKey([grant.replace("{apiId}", apiId)]);
      const res = await s.as(key).apis.updateApi({ apiId, name: "granted" });
      expect(res.data?.name).toBe("granted");
    },
  );

  it("answers 404 for an unknown, a malformed or a deleted API, before 403", async () => {
    const deleted = await apiWith();
    await s.api.apis.deleteApi({ apiId: deleted });
    const narrow = await s.seed.rootKey(["api.*.read_api"]);
    for (const apiId of ["api_nothere", "not an id", deleted]) {
      for (const caller of [s.api, s.as(narrow)]) {
        const r = await refusal(caller.apis.updateApi({ apiId, name: "nothing" }));
        expect(r).toMatchObject({ status: 404, errorCode: "err:svc:data:api_not_found" });
      }
    }
    const rows = await s.db.query("select name from apis where id = $1", [deleted]);
    expect(rows).toEqual([{ name: "before" }]);
  });

  it("cannot change another workspace's API", async () => {
    const ws = await s.seed.workspace();
    const theirs = await s.seed.api(ws, "theirs");
    const before = await quiet();
    const r = await refusal(s.api.apis.updateApi({ apiId: theirs, name: "ours now" }));
    expect(r).toMatchObject({ status: 404, errorCode: "err:svc:data:api_not_found" });
    expect(await s.changesSince(before)).toEqual({});
    const owner = s.as(await s.seed.rootKey(["*.*.*"], ws));
    expect((await owner.apis.getApi({ apiId: theirs })).data?.name).toBe("theirs");
  });
});
