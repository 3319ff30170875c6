import { Code } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { useServer } from "../../harness/server.js";
import { refusal } from "../../harness/typed.js";

// identities.deleteIdentity: soft-deletes a live identity of the caller's workspace and removes
// its rate limits, audited as identity.delete and ratelimit.delete. Its keys stay; its
// externalId stays reserved. A second delete is 404.

const s = useServer();
let n = 0;

describe("identities.deleteIdentity", () => {
  it("soft-deletes, then 404, audited with its rate limits", async () => {
    const externalId = `del_${++n}_${Date.now()}`;
    const made = await s.api.identities.createIdentity({
      externalId,
      ratelimits: [{ name: "reqs", limit: 10n, duration: 60000n }],
    });
    const id = made.data?.identityId as string;
    const res = await s.api.identities.deleteIdentity({ externalId });
    expect(res.data?.$typeName).toBe("latchkey.v2.DeleteIdentityResponseData");
    expect((await refusal(s.api.identities.getIdentity({ identity: id }))).status).toBe(404);
    const again = await refusal(s.api.identities.deleteIdentity({ identity: id }));
    expect(again.code).toBe(Code.NotFound);
    expect(again).toMatchObject({ status: 404, errorCode: "err:svc:data:identity_not_found" });
    const rows = await s.db.query("select deleted_at from identities where id = $1", [id]);
    expect(rows).toEqual([{ deleted_at: s.clock.now() }]);
    const limits = await s.db.query("select 1 from ratelimits where identity_id = $1", [id]);
    expect(limits).toEqual([]);
    const audit = await s.db.query<{ event: string }>(
      "select event from audit_logs where request_id = $1 order by event",
      [res.meta?.requestId],
    );
    expect(audit.map((a) => a.event)).toEqual(["identity.delete", "ratelimit.delete"]);
  });

  it("answers 403 naming identity.<id>.delete_identity, and leaves the identity", async () => {
    const { id } = await s.seed.identity();
    const reader = s.as(await s.seed.rootKey(["identity.*.read_identity"]));
    const before = await s.snapshot();
    const r = await refusal(reader.identities.deleteIdentity({ identity: id }));
    expect(r.code).toBe(Code.PermissionDenied);
    expect(r.status).toBe(403);
    expect(r.detail).toContain(`identity.${id}.delete_identity`);
    expect(await s.changesSince(before)).toEqual({});
  });

  it("cannot delete another workspace's identity", async () => {
    const foreign = await s.seed.identity({ workspaceId: await s.seed.workspace() });
    const r = await refusal(s.api.identities.deleteIdentity({ identity: foreign.id }));
    expect(r.status).toBe(404);
    const rows = await s.db.query("select deleted_at from identities where id = $1", [foreign.id]);
    expect(rows).toEqual([{ deleted_at: null }]);
  });
});
