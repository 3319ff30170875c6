import { describe, expect, it } from "vitest";
import { type ProcedureName, procedures } from "../../src/services/procedures.js";
import { DOORS } from "../harness/doors.js";
import { type Auth, useServer } from "../harness/server.js";

// The authentication every procedure shares, generated from the procedures' options so that no
// procedure can be left out: a procedure that needs a root key refuses a call without one, with
// a malformed Authorization header, with an unknown root key, and with a revoked one (even
// right after the key was cached), with 401 on every door, writing nothing. A procedure whose
// root key is optional still refuses a malformed, unknown or revoked one. Authentication comes
// before the body is read, so an empty body is enough.

const s = useServer();

const REFUSED: [label: string, auth: Auth, code: string][] = [
  ["a Basic header", { header: "Basic dXNlcjpwYXNz" }, "err:svc:authentication:malformed"],
  ["a Bearer header without a token", { header: "Bearer " }, "err:svc:authentication:malformed"],
  [
    "an unknown root key",
    "root_unknownKeyThatDoesNotExist",
    "err:svc:authentication:key_not_found",
  ],
];
const MISSING: [string, Auth, string] = [
  "no Authorization header",
  null,
  "err:svc:authentication:missing",
];

const authenticated = (Object.entries(procedures) as [ProcedureName, { auth: string }][])
  .filter(([, p]) => p.auth !== "none")
  .map(([name, p]) => ({ name, optional: p.auth === "optional" }));

it("covers every procedure but the two that are open to anyone, written out here", () => {
  const names = Object.keys(procedures);
  const open = names.filter((n) => !authenticated.some((a) => a.name === n));
  expect(open).toEqual(["liveness.check"]);
  expect(authenticated.filter((a) => a.optional).map((a) => a.name)).toEqual(["keys.verifyKey"]);
  expect(authenticated.length).toBe(names.length - 1);
});

describe.each(DOORS)("authentication via %s", (door) => {
  it.each(authenticated)(
    "$name refuses a missing, malformed, unknown or revoked root key with 401, writing nothing",
    async ({ name, optional }) => {
      const cases = optional ? REFUSED : [MISSING, ...REFUSED];
      const before = await s.snapshot();
      for (const [label, auth, code] of cases) {
        const res = await s.call(door, name, {}, auth);
        expect(res.status, label).toBe(401);
        expect(res.error?.code, label).toBe(code);
        expect(res.error?.title, label).toBe("Unauthorized");
        expect(res.requestId, label).toMatch(/^req_/);
      }
      expect(await s.changesSince(before)).toEqual({});
      // A revoked key is refused at once, though its last use left it in the cache.
      const key = await s.seed.rootKeyWithId(["api.*.read_api"]);
      expect((await s.call(door, name, {}, key.secret)).status).not.toBe(401);
      await s.seed.revokeRootKey(key.id);
      const res = await s.call(door, name, {}, key.secret);
      expect(res.status).toBe(401);
      expect(res.error?.code).toBe("err:svc:authentication:key_not_found");
    },
  );
});
