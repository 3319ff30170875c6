import { describe, expect, it } from "vitest";
import { DOORS } from "./doors.js";
import type { Auth, TestServer } from "./server.js";

/**
 * The authentication rows every authenticated procedure shares: no header, a malformed
 * header, an unknown key and a revoked key are all 401 on every door, and write nothing.
 * `body` builds a request that would otherwise succeed.
 */
export function runAuthCases(
  s: TestServer,
  procedure: string,
  body: () => Promise<unknown> | unknown,
): void {
  describe.each(DOORS)("unauthenticated via %s", (door) => {
    it.each([
      ["no Authorization header", null, "err:svc:authentication:missing"],
      ["a Basic header", { header: "Basic dXNlcjpwYXNz" }, "err:svc:authentication:malformed"],
      [
        "a Bearer header without a token",
        { header: "Bearer " },
        "err:svc:authentication:malformed",
      ],
      [
        "an unknown root key",
        "root_unknownKeyThatDoesNotExist",
        "err:svc:authentication:key_not_found",
      ],
    ] as [string, Auth, string][])(
      "rejects %s with 401 and writes nothing",
      async (_, auth, code) => {
        const request = await body();
        const before = await s.snapshot();
        const res = await s.call(door, procedure, request, auth);
        expect(res.status).toBe(401);
        expect(res.error?.code).toBe(code);
        expect(res.error?.title).toBe("Unauthorized");
        expect(res.requestId).toMatch(/^req_/);
        expect(await s.changesSince(before)).toEqual({});
      },
    );

    it("rejects a revoked root key with 401, even right after it was cached", async () => {
      const key = await s.seed.rootKeyWithId(["*.*.*"]);
      await s.call(door, procedure, await body(), key.secret);
      await s.seed.revokeRootKey(key.id);
      const res = await s.call(door, procedure, await body(), key.secret);
      expect(res.status).toBe(401);
      expect(res.error?.code).toBe("err:svc:authentication:key_not_found");
    });
  });
}
