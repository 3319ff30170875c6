import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { KeyFormat, LeakPolicy } from "../../../gen/latchkey/v2/apis_pb.js";
import { VerifyKeyCode } from "../../../gen/latchkey/v2/keys_pb.js";
import { checksumOf, looksLikeLatchkeyKey } from "../../../src/domain/key-format.js";
import { useServer } from "../../harness/server.js";

// The key format and the leak policy of an API: createApi sets them (checksummed keys and
// disable for a new API), updateApi changes them, getApi and listApis read them, createKey and rerollKey write keys
// in the format, and keys of either format (and migrated hashes) verify alike.

const s = useServer();
const PLAIN_16 = /^sk_[1-9A-HJ-NP-Za-km-z]{19,22}$/;
const CHECKSUMMED_16 = /^sk_[1-9A-HJ-NP-Za-km-z]{28}$/;

async function verifies(key: string) {
  return (await s.api.keys.verifyKey({ key })).data?.code;
}

describe("API key formats", () => {
  it("are checksummed, with leaks disabling the key, for a new API that names neither", async () => {
    const apiId = (await s.api.apis.createApi({ name: "defaults" })).data?.apiId as string;
    expect((await s.api.apis.getApi({ apiId })).data).toMatchObject({
      keyFormat: KeyFormat.CHECKSUMMED,
      leakPolicy: LeakPolicy.DISABLE,
    });
    const key = (await s.api.keys.createKey({ apiId, prefix: "sk" })).data?.key as string;
    expect(key).toMatch(CHECKSUMMED_16);
    expect(looksLikeLatchkeyKey(key)).toBe(true);
    expect(await verifies(key)).toBe(VerifyKeyCode.VALID);
  });

  it("take unspecified as the defaults", async () => {
    const apiId = (
      await s.api.apis.createApi({
        name: "unspecified",
        keyFormat: KeyFormat.UNSPECIFIED,
        leakPolicy: LeakPolicy.UNSPECIFIED,
      })
    ).data?.apiId as string;
    expect((await s.api.apis.getApi({ apiId })).data).toMatchObject({
      keyFormat: KeyFormat.CHECKSUMMED,
      leakPolicy: LeakPolicy.DISABLE,
    });
  });

  it.each([
    [LeakPolicy.REVOKE, KeyFormat.PLAIN],
    [LeakPolicy.NOTIFY, KeyFormat.CHECKSUMMED],
    [LeakPolicy.DISABLE, KeyFormat.PLAIN],
  ])(
    "store leak policy %i and format %i, read back by getApi and listApis",
    async (leakPolicy, keyFormat) => {
      const apiId = (await s.api.apis.createApi({ name: "chosen", keyFormat, leakPolicy })).data
        ?.apiId as string;
      const want = { id: apiId, name: "chosen", keyFormat, leakPolicy };
      expect((await s.api.apis.getApi({ apiId })).data).toMatchObject(want);
      const listed = (await s.api.apis.listApis({})).data.find((a) => a.id === apiId);
      expect(listed).toMatchObject(want);
    },
  );

  it("write plain keys, which verify, for an API that asks for them", async () => {
    const { data } = await s.api.apis.createApi({ name: "plain", keyFormat: KeyFormat.PLAIN });
    const apiId = data?.apiId as string;
    for (let i = 0; i < 5; i++) {
      const key = (await s.api.keys.createKey({ apiId, prefix: "sk" })).data?.key as string;
      expect(key).toMatch(PLAIN_16);
      expect(looksLikeLatchkeyKey(key)).toBe(false);
      expect(await verifies(key)).toBe(VerifyKeyCode.VALID);
    }
  });

  it("leave an API made before formats existed plain, its new keys too", async () => {
    // What the migration gives every API that exists when it runs: the column's default.
    const apiId = `api_old${Date.now()}`;
    await s.db.query(
      "insert into apis (id, workspace_id, name, created_at) values ($1, $2, 'old', 0)",
      [apiId, s.workspaceId],
    );
    expect((await s.api.apis.getApi({ apiId })).data).toMatchObject({
      keyFormat: KeyFormat.PLAIN,
      leakPolicy: LeakPolicy.DISABLE,
    });
    const key = (await s.api.keys.createKey({ apiId, prefix: "sk" })).data?.key as string;
    expect(key).toMatch(PLAIN_16);
    expect(await verifies(key)).toBe(VerifyKeyCode.VALID);
  });

  it("verify a migrated hash in a checksummed API, its secret having no checksum", async () => {
    const apiId = await s.seed.api(undefined, "migrated", { keyFormat: "checksummed" });
    const secret = `legacy_${Date.now()}`;
    const hash = createHash("sha256").update(secret).digest("base64");
    await s.api.keys.migrateKeys({ migrationId: "m_format", apiId, keys: [{ hash }] });
    expect(await verifies(secret)).toBe(VerifyKeyCode.VALID);
  });

  it("reroll a plain key of an API now checksummed into a checksummed one; both verify", async () => {
    const apiId = await s.seed.api(undefined, "switched", { keyFormat: "plain" });
    const old = (await s.api.keys.createKey({ apiId, prefix: "sk" })).data;
    expect(old?.key).toMatch(PLAIN_16);
    await s.api.apis.updateApi({ apiId, keyFormat: KeyFormat.CHECKSUMMED });
    const fresh = (await s.api.keys.rerollKey({ keyId: old?.keyId as string, expiration: 60_000n }))
      .data?.key as string;
    expect(fresh).toMatch(CHECKSUMMED_16);
    expect(await verifies(old?.key as string)).toBe(VerifyKeyCode.VALID);
    expect(await verifies(fresh)).toBe(VerifyKeyCode.VALID);
  });

  it("look a key with a wrong checksum up like any unknown key: NOT_FOUND, nothing refused early", async () => {
    const apiId = await s.seed.api();
    const key = (await s.api.keys.createKey({ apiId, prefix: "sk" })).data?.key as string;
    const head = key.slice(0, -6);
    const wrong = `${head}${checksumOf(head) === "111111" ? "111112" : "111111"}`;
    expect(await verifies(wrong)).toBe(VerifyKeyCode.NOT_FOUND);
  });

  it("answer the /v2 door with the format and policy as strings, and refuse unknown ones", async () => {
    const made = await s.call("json", "apis.createApi", {
      name: "strings",
      keyFormat: "plain",
      leakPolicy: "notify",
    });
    expect(made.status).toBe(200);
    const apiId = made.data.apiId as string;
    const got = await s.call("json", "apis.getApi", { apiId });
    expect(got.data).toEqual({
      id: apiId,
      name: "strings",
      keyFormat: "plain",
      leakPolicy: "notify",
    });
    // Once the earlier tests' verification events are written: their writer changes rows in
    // the background, which the snapshot would count as this call's.
    await s.app.deps.events.flush();
    const before = await s.snapshot();
    const bad = await s.call("json", "apis.createApi", { name: "bad", leakPolicy: "delete" });
    expect(bad.status).toBe(400);
    expect(bad.error?.errors?.map((e) => e.location)).toEqual(["/leakPolicy"]);
    expect(await s.changesSince(before)).toEqual({});
  });
});
