import { Unkey } from "@unkey/api";
import * as errors from "@unkey/api/models/errors";
import { beforeAll, describe, expect, it } from "vitest";
import { useServer } from "../harness/server.js";

const s = useServer();
let unkey: Unkey;
beforeAll(() => {
  unkey = new Unkey({ rootKey: s.rootKey, serverURL: s.url });
});

describe("@unkey/api 2.5.1 against Latchkey: identities", () => {
  it("creates, gets, lists, updates and deletes an identity", async () => {
    const created = await unkey.identities.createIdentity({
      externalId: "sdk_user_1",
      meta: { plan: "pro" },
      ratelimits: [{ name: "requests", limit: 10, duration: 60000, autoApply: true }],
    });
    const identityId = created.data.identityId;
    const got = await unkey.identities.getIdentity({ identity: "sdk_user_1" });
    expect(got.data).toMatchObject({
      id: identityId,
      externalId: "sdk_user_1",
      meta: { plan: "pro" },
    });
    expect(got.data.ratelimits?.[0]).toMatchObject({
      name: "requests",
      limit: 10,
      duration: 60000,
      autoApply: true,
    });

    const list = await unkey.identities.listIdentities({});
    expect(list.result.data.map((i) => i.id)).toContain(identityId);
    expect(list.result.pagination.hasMore).toBe(false);

    const updated = await unkey.identities.updateIdentity({
      identity: identityId,
      meta: { plan: "team" },
      ratelimits: [],
    });
    expect(updated.data.meta).toEqual({ plan: "team" });
    expect(updated.data.ratelimits ?? []).toEqual([]);

    const deleted = await unkey.identities.deleteIdentity({ identity: identityId });
    expect(deleted.meta.requestId).toMatch(/^req_/);
  });

  it("maps 409 and 404 to the SDK's error classes", async () => {
    await unkey.identities.createIdentity({ externalId: "sdk_dup" });
    const dup = await unkey.identities
      .createIdentity({ externalId: "sdk_dup" })
      .catch((e: unknown) => e);
    expect(dup).toBeInstanceOf(errors.ConflictErrorResponse);
    const missing = await unkey.identities
      .getIdentity({ identity: "sdk_nobody" })
      .catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(errors.NotFoundErrorResponse);
  });
});
