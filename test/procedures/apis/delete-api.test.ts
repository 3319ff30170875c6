import { Code } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { countOf, together } from "../../harness/race.js";
import { useServer } from "../../harness/server.js";
import { refusal } from "../../harness/typed.js";

// apis.deleteApi: soft-deletes a live API of the caller's workspace (its keys stay stored but
// stop verifying), audited as api.delete. A second delete, or the loser of two at once, is 404.

const s = useServer();

describe("apis.deleteApi", () => {
  it("soft-deletes the API, answers data {}, and audits it", async () => {
    const apiId = await s.seed.api();
    const res = await s.api.apis.deleteApi({ apiId });
    expect(res.data?.$typeName).toBe("latchkey.v2.DeleteApiResponseData");
    expect((await refusal(s.api.apis.getApi({ apiId }))).status).toBe(404);
    const rows = await s.db.query("select deleted_at from apis where id = $1", [apiId]);
    expect(rows).toEqual([{ deleted_at: s.clock.now() }]);
    const audit = await s.db.query(
      "select event, request_id from audit_logs where resource_id = $1",
      [apiId],
    );
    expect(audit).toEqual([{ event: "api.delete", request_id: res.meta?.requestId }]);
  });

  it("lets exactly one of two concurrent deletes succeed", async () => {
    const apiId = await s.seed.api();
    const del = () => s.api.apis.deleteApi({ apiId });
    const results = await together([del, del], [200, 404]);
    expect(countOf(results, 200)).toBe(1);
    const audit = await s.db.query("select 1 from audit_logs where resource_id = $1", [apiId]);
    expect(audit).toHaveLength(1);
  });

  it("answers a second delete with 404 and writes nothing", async () => {
    const apiId = await s.seed.api();
    await s.api.apis.deleteApi({ apiId });
    const before = await s.snapshot();
    const r = await refusal(s.api.apis.deleteApi({ apiId }));
    expect(r.code).toBe(Code.NotFound);
    expect(r).toMatchObject({ status: 404, errorCode: "err:svc:data:api_not_found" });
    expect(await s.changesSince(before)).toEqual({});
  });

  it("answers an unknown id with 404", async () => {
    const r = await refusal(s.api.apis.deleteApi({ apiId: "api_nothere" }));
    expect(r.errorCode).toBe("err:svc:data:api_not_found");
  });

  it("answers 403 naming api.<apiId>.delete_api and keeps the API", async () => {
    const apiId = await s.seed.api();
    const key = await s.seed.rootKey(["api.*.read_api"]);
    const before = await s.snapshot();
    const r = await refusal(s.as(key).apis.deleteApi({ apiId }));
    expect(r.code).toBe(Code.PermissionDenied);
    expect(r.status).toBe(403);
    expect(r.detail).toContain(`api.${apiId}.delete_api`);
    expect(await s.changesSince(before)).toEqual({});
  });

  it("cannot delete another workspace's API", async () => {
    const ws = await s.seed.workspace();
    const theirs = await s.seed.api(ws);
    expect((await refusal(s.api.apis.deleteApi({ apiId: theirs }))).status).toBe(404);
    const owner = s.as(await s.seed.rootKey(["*.*.*"], ws));
    expect((await owner.apis.getApi({ apiId: theirs })).data?.id).toBe(theirs);
  });
});
