import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { useServer } from "../../harness/server.js";
import { refusal } from "../../harness/typed.js";

// keys.migrateKeys: imports keys of another system by the SHA-256 of their secret (base64 or
// hex), which verify at once; a hash a key of the workspace has already, or that comes twice,
// is reported in `failed` and skipped.

const s = useServer();
let n = 0;
const sha = (v: string, enc: "hex" | "base64") => createHash("sha256").update(v).digest(enc);

describe("keys.migrateKeys", () => {
  it("imports keys by base64 or hex hash; whoami finds them by their secret", async () => {
    const apiId = await s.seed.api();
    const a = `legacy_a_${++n}`;
    const b = `legacy_b_${n}`;
    const { data } = await s.api.keys.migrateKeys({
      migrationId: "from_legacy",
      apiId,
      keys: [
        {
          hash: sha(a, "base64"),
          name: "A",
          credits: { remaining: 5n },
          permissions: ["legacy.read"],
        },
        {
          hash: sha(b, "hex"),
          externalId: `legacy_user_${n}`,
          ratelimits: [{ name: "rrr", limit: 1n, duration: 1000n }],
        },
        { hash: sha(a, "hex") },
      ],
    });
    expect(data?.migrated.map((m) => m.hash)).toEqual([sha(a, "base64"), sha(b, "hex")]);
    expect(data?.failed).toEqual([sha(a, "hex")]);
    const who = (await s.api.keys.whoami({ key: a })).data;
    expect(who).toMatchObject({
      keyId: data?.migrated[0]?.keyId,
      start: "",
      name: "A",
      credits: { remaining: 5n },
      permissions: ["legacy.read"],
    });
    const whoB = (await s.api.keys.whoami({ key: b })).data;
    expect(whoB?.keyId).toBe(data?.migrated[1]?.keyId);
    expect(whoB?.identity?.externalId).toBe(`legacy_user_${n}`);
  });

  it("answers failed: [] when nothing failed, and an unknown role with 404 writing nothing", async () => {
    const apiId = await s.seed.api();
    const ok = await s.api.keys.migrateKeys({
      migrationId: "m1x",
      apiId,
      keys: [{ hash: sha(`ok_${++n}`, "hex") }],
    });
    expect(ok.data?.migrated).toHaveLength(1);
    expect(ok.data?.failed).toEqual([]);
    const before = await s.snapshot();
    const r = await refusal(
      s.api.keys.migrateKeys({
        migrationId: "m1x",
        apiId,
        keys: [{ hash: sha(`r_${++n}`, "hex"), roles: ["no_role_here"] }],
      }),
    );
    expect(r).toMatchObject({ status: 404, errorCode: "err:svc:data:role_not_found" });
    expect(await s.changesSince(before)).toEqual({});
  });

  it("answers a hash that is no SHA-256 and more than 100 keys with 400 at the field", async () => {
    const apiId = await s.seed.api();
    const bad = await refusal(
      s.api.keys.migrateKeys({ migrationId: "m1x", apiId, keys: [{ hash: "z".repeat(64) }] }),
    );
    expect(bad.status).toBe(400);
    expect(bad.errors[0]?.location).toBe("/keys/0/hash");
    const keys = Array.from({ length: 101 }, (_, i) => ({ hash: sha(`many_${i}`, "hex") }));
    const tooMany = await refusal(s.api.keys.migrateKeys({ migrationId: "m1x", apiId, keys }));
    expect(tooMany.status).toBe(400);
    expect(tooMany.errors[0]?.location).toBe("/keys");
  });

  describe("on the /v2 JSON door", () => {
    it("lists failed even when nothing failed", async () => {
      // The door's answers are checked against the OpenAPI document, which requires
      // `failed`: a 200 is an answer that lists it.
      const res = await s.call("json", "keys.migrateKeys", {
        migrationId: "m1x",
        apiId: await s.seed.api(),
        keys: [{ hash: sha(`ok_${++n}`, "hex") }],
      });
      expect(res.status).toBe(200);
    });
  });
});
