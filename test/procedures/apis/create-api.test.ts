import { describe, expect, it } from "vitest";
import { DOORS, useServer } from "../../harness/server.js";

const s = useServer();

describe.each(DOORS)("apis.createApi via %s", (door) => {
  describe("ok", () => {
    it("creates an API that getApi returns, and audits it", async () => {
      const res = await s.call(door, "apis.createApi", { name: `payments-${door}` });
      expect(res.status).toBe(200);
      expect(res.requestId).toMatch(/^req_[a-zA-Z0-9]+$/);
      expect(res.data.apiId).toMatch(/^api_[a-zA-Z0-9]{16}$/);
      const got = await s.call(door, "apis.getApi", { apiId: res.data.apiId });
      expect(got.data).toEqual({ id: res.data.apiId, name: `payments-${door}` });
      const audit = await s.db.query<{
        event: string;
        actor_type: string;
        request_id: string;
        workspace_id: string;
      }>(
        "select event, actor_type, request_id, workspace_id from audit_logs where resource_id = $1",
        [res.data.apiId],
      );
      expect(audit).toEqual([
        {
          event: "api.create",
          actor_type: "rootkey",
          request_id: res.requestId,
          workspace_id: s.workspaceId,
        },
      ]);
    });

    it("accepts names of 3 and 256 characters, counted in code points", async () => {
      for (const name of ["abc", "x".repeat(256), "😀😀😀"]) {
        expect((await s.call(door, "apis.createApi", { name })).status).toBe(200);
      }
    });
  });

  describe("invalid input", () => {
    it.each([
      ["a name of 2 characters", { name: "ab" }, /at least 3/],
      ["a name of 257 characters", { name: "x".repeat(257) }, /at most 256/],
      ["no name", {}, /is required/],
    ])("rejects %s with 400 at /name and writes nothing", async (_, body, message) => {
      const before = await s.snapshot();
      const res = await s.call(door, "apis.createApi", body);
      expect(res.status).toBe(400);
      expect(res.error?.code).toBe("err:svc:application:invalid_input");
      expect(res.error?.errors).toEqual([
        { location: "/name", message: expect.stringMatching(message) },
      ]);
      expect(await s.changesSince(before)).toEqual({});
    });
  });

  describe("permission denied", () => {
    it("needs api.*.create_api: a key with only per-API grants gets 403 naming it", async () => {
      const key = await s.seed.rootKey(["api.*.read_api", "api.api_x.create_api"]);
      const before = await s.snapshot();
      const res = await s.call(door, "apis.createApi", { name: "nope" }, key);
      expect(res.status).toBe(403);
      expect(res.error?.code).toBe("err:svc:authorization:insufficient_permissions");
      expect(res.error?.detail).toContain("api.*.create_api");
      expect(await s.changesSince(before)).toEqual({});
    });

    it("accepts api.*.create_api and wildcard grants", async () => {
      for (const grant of ["api.*.create_api", "api.*.*", "*.*.create_api"]) {
        const key = await s.seed.rootKey([grant]);
        expect((await s.call(door, "apis.createApi", { name: "granted" }, key)).status).toBe(200);
      }
    });

    it("checks authentication before validation: a bad body with no key is 401", async () => {
      const res = await s.call(door, "apis.createApi", { name: "x" }, null);
      expect(res.status).toBe(401);
    });
  });

  describe("other workspace", () => {
    it("creates the API in the root key's own workspace", async () => {
      const ws = await s.seed.workspace();
      const key = await s.seed.rootKey(["api.*.*"], ws);
      const res = await s.call(door, "apis.createApi", { name: "theirs" }, key);
      expect((await s.call(door, "apis.getApi", { apiId: res.data.apiId }, key)).status).toBe(200);
      expect((await s.call(door, "apis.getApi", { apiId: res.data.apiId })).status).toBe(404);
    });
  });
});
