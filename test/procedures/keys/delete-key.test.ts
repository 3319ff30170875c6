import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { useServer } from "../../harness/server.js";
import { refusal } from "../../harness/typed.js";
import { issueKey } from "./issue-key.js";

// keys.deleteKey: revokes a key. By default it is marked deleted (gone from every procedure,
// its hash still reserved); `permanent` removes it with its links and rate limits.

const s = useServer();

describe("keys.deleteKey", () => {
  it("soft-deletes: gone from every procedure, hash reserved, second delete 404", async () => {
    const k = await issueKey(s);
    const res = await s.api.keys.deleteKey({ keyId: k.keyId });
    const notFound = { status: 404, errorCode: "err:svc:data:key_not_found" };
    expect(await refusal(s.api.keys.getKey({ keyId: k.keyId }))).toMatchObject(notFound);
    expect(await refusal(s.api.keys.whoami({ key: k.key }))).toMatchObject(notFound);
    expect((await s.api.apis.listKeys({ apiId: k.apiId })).data).toEqual([]);
    expect(await refusal(s.api.keys.deleteKey({ keyId: k.keyId }))).toMatchObject(notFound);
    const hash = createHash("sha256").update(k.key).digest("base64");
    const migrate = await s.api.keys.migrateKeys({
      migrationId: "mig",
      apiId: k.apiId,
      keys: [{ hash }],
    });
    expect(migrate.data?.migrated).toEqual([]);
    expect(migrate.data?.failed).toEqual([hash]);
    const audit = await s.db.query<{ event: string }>(
      "select event from audit_logs where request_id = $1",
      [res.meta?.requestId],
    );
    expect(audit).toEqual([{ event: "key.delete" }]);
  });

  it("deletes permanently with its links and rate limits", async () => {
    const { keyId } = await issueKey(s, {
      permissions: ["perm.del.x"],
      ratelimits: [{ name: "rrr", limit: 1n, duration: 1000n }],
    });
    await s.api.keys.deleteKey({ keyId, permanent: true });
    expect(await s.db.query("select 1 from keys where id = $1", [keyId])).toEqual([]);
    expect(await s.db.query("select 1 from keys_permissions where key_id = $1", [keyId])).toEqual(
      [],
    );
    expect(await s.db.query("select 1 from ratelimits where key_id = $1", [keyId])).toEqual([]);
  });

  it("answers 403 naming delete_key, and 404 for another workspace's key", async () => {
    const k = await issueKey(s);
    const updater = s.as(await s.seed.rootKey(["api.*.update_key"]));
    const r = await refusal(updater.keys.deleteKey({ keyId: k.keyId }));
    expect(r.status).toBe(403);
    expect(r.detail).toContain(`api.${k.apiId}.delete_key`);
    const ws = await s.seed.workspace();
    const foreignApi = s.as(await s.seed.rootKey(["*.*.*"], ws));
    const foreign = await issueKey(s, { apiId: await s.seed.api(ws) }, foreignApi);
    expect((await refusal(s.api.keys.deleteKey({ keyId: foreign.keyId }))).status).toBe(404);
  });
});
