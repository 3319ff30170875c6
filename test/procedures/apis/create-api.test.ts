import { Code } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { useServer } from "../../harness/server.js";
import { refusal } from "../../harness/typed.js";

// apis.createApi: creates an API, named by the caller, in the root key's own workspace, and
// audits it as api.create.

const s = useServer();

describe("apis.createApi", () => {
  it("creates an API that getApi returns, and audits it", async () => {
    const res = await s.api.apis.createApi({ name: "payments" });
    const requestId = res.meta?.requestId;
    expect(requestId).toMatch(/^req_[a-zA-Z0-9]+$/);
    const apiId = res.data?.apiId as string;
    expect(apiId).toMatch(/^api_[a-zA-Z0-9]{16}$/);
    const got = await s.api.apis.getApi({ apiId });
    expect(got.data).toMatchObject({ id: apiId, name: "payments" });
    const audit = await s.db.query(
      "select event, actor_type, request_id, workspace_id from audit_logs where resource_id = $1",
      [apiId],
    );
    expect(audit).toEqual([
      {
        event: "api.create",
        actor_type: "rootkey",
        request_id: requestId,
        workspace_id: s.workspaceId,
      },
    ]);
  });

  it("accepts names of 3 and 256 characters, counted in code points", async () => {
    for (const name of ["abc", "x".repeat(256), "😀😀😀"]) {
      const res = await s.api.apis.createApi({ name });
      expect((await s.api.apis.getApi({ apiId: res.data?.apiId as string })).data?.name).toBe(name);
    }
  });

  it.each([
    ["a name of 2 characters", "ab", /at least 3/],
    ["a name of 257 characters", "x".repeat(257), /at most 256/],
    ["no name", "", /is required/],
  ])("rejects %s with 400 at /name and writes nothing", async (_, name, message) => {
    const before = await s.snapshot();
    const r = await refusal(s.api.apis.createApi({ name }));
    expect(r.code).toBe(Code.InvalidArgument);
    expect(r).toMatchObject({ status: 400, errorCode: "err:svc:application:invalid_input" });
    expect(r.errors).toEqual([{ location: "/name", message: expect.stringMatching(message) }]);
    expect(await s.changesSince(before)).toEqual({});
  });

  it("needs api.*.create_api: a key with only per-API grants gets 403 naming it", async () => {
    const key = await s.seed.rootKey(["api.*.read_api", "api.api_x.create_api"]);
    const before = await s.snapshot();
    const r = await refusal(s.as(key).apis.createApi({ name: "nope" }));
    expect(r.code).toBe(Code.PermissionDenied);
    expect(r).toMatchObject({
      status: 403,
      errorCode: "err:svc:authorization:insufficient_permissions",
    });
    expect(r.detail).toContain("api.*.create_api");
    expect(await s.changesSince(before)).toEqual({});
  });

  it.each(["api.*.create_api", "api.*.*", "*.*.create_api"])(
    "accepts a key granted %s",
    async (grant) => {
      const key = await s.seed.rootKey([grant]);
      const res = await s.as(key).apis.createApi({ name: "granted" });
      expect(res.data?.apiId).toMatch(/^api_/);
    },
  );

  it("creates the API in the root key's own workspace", async () => {
    const ws = await s.seed.workspace();
    const theirs = s.as(await s.seed.rootKey(["api.*.*"], ws));
    const apiId = (await theirs.apis.createApi({ name: "theirs" })).data?.apiId as string;
    expect((await theirs.apis.getApi({ apiId })).data?.id).toBe(apiId);
    expect((await refusal(s.api.apis.getApi({ apiId }))).status).toBe(404);
    const rows = await s.db.query("select workspace_id from apis where id = $1", [apiId]);
    expect(rows).toEqual([{ workspace_id: ws }]);
  });
});
