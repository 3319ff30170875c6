import { Code } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { useServer } from "../../harness/server.js";
import { refusal } from "../../harness/typed.js";

// apis.getApi: one live API of the caller's workspace. It looks the API up before it checks
// api.<apiId>.read_api, so a missing, deleted or foreign API is 404 whatever the key may do.

const s = useServer();

describe("apis.getApi", () => {
  it("returns id and name", async () => {
    const apiId = await s.seed.api(s.workspaceId, "billing");
    const res = await s.api.apis.getApi({ apiId });
    expect(res.data).toMatchObject({ id: apiId, name: "billing" });
  });

  it("rejects a missing apiId with 400 at /apiId", async () => {
    const r = await refusal(s.api.apis.getApi({}));
    expect(r.code).toBe(Code.InvalidArgument);
    expect(r.status).toBe(400);
    expect(r.errors).toEqual([{ location: "/apiId", message: "is required" }]);
  });

  it.each([
    ["an unknown id", "api_doesnotexist123"],
    ["a malformed id, which cannot exist", "not an id!"],
    ["a very long id", `api_${"x".repeat(400)}`],
  ])("answers %s with 404 api_not_found", async (_, apiId) => {
    const r = await refusal(s.api.apis.getApi({ apiId }));
    expect(r.code).toBe(Code.NotFound);
    expect(r).toMatchObject({
      status: 404,
      errorCode: "err:svc:data:api_not_found",
      title: "Not Found",
    });
  });

  it("answers a deleted API with 404, though it was read (and cached) just before", async () => {
    const apiId = await s.seed.api();
    await s.api.apis.getApi({ apiId });
    await s.api.apis.deleteApi({ apiId });
    expect((await refusal(s.api.apis.getApi({ apiId }))).status).toBe(404);
  });

  it("looks up before it authorizes: a key without read_api gets 404 for an unknown id", async () => {
    const key = await s.seed.rootKey(["api.*.create_api"]);
    const r = await refusal(s.as(key).apis.getApi({ apiId: "api_unknown" }));
    expect(r.errorCode).toBe("err:svc:data:api_not_found");
  });

  it("answers an existing API with 403 naming the per-API permission", async () => {
    const apiId = await s.seed.api();
    const key = await s.seed.rootKey(["api.*.create_api"]);
    const r = await refusal(s.as(key).apis.getApi({ apiId }));
    expect(r.code).toBe(Code.PermissionDenied);
    expect(r.status).toBe(403);
    expect(r.detail).toContain(`api.${apiId}.read_api`);
  });

  it("honours a grant for one API only", async () => {
    const mine = await s.seed.api();
    const other = await s.seed.api();
    const narrow = s.as(await s.seed.rootKey([`api.${mine}.read_api`]));
    expect((await narrow.apis.getApi({ apiId: mine })).data?.id).toBe(mine);
    expect((await refusal(narrow.apis.getApi({ apiId: other }))).status).toBe(403);
  });

  it("does not reveal another workspace's API: 404, even with *.*.*", async () => {
    const theirs = await s.seed.api(await s.seed.workspace());
    const r = await refusal(s.api.apis.getApi({ apiId: theirs }));
    expect(r).toMatchObject({ status: 404, errorCode: "err:svc:data:api_not_found" });
  });
});
