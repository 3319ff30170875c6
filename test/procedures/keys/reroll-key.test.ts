import { toJson } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { CreditsOperation, type Key, KeySchema } from "../../../gen/latchkey/v2/keys_pb.js";
import { useServer } from "../../harness/server.js";
import { refusal } from "../../harness/typed.js";
import { issueKey } from "./issue-key.js";

// keys.rerollKey: replaces a key by a new one with the same settings. The old key keeps
// verifying until `now + expiration` (never later than it would have) and spends the new key's
// balance meanwhile.

const s = useServer();
let n = 0;
const getKey = async (keyId: string) => (await s.api.keys.getKey({ keyId })).data as Key;

/** What a reroll copies: the record in its JSON form without what is the key's own. */
function settingsOf(k: Key) {
  const json = toJson(KeySchema, k) as { [p: string]: unknown; ratelimits?: { id?: string }[] };
  for (const own of ["keyId", "start", "createdAt", "updatedAt", "expires"]) delete json[own];
  for (const limit of json.ratelimits ?? []) delete limit.id;
  return json;
}

describe("keys.rerollKey", () => {
  it("issues a new key with the same settings, keeping an underscored prefix whole", async () => {
    const role = `reroll_role_${++n}`;
    await s.api.permissions.createRole({ name: role });
    const k = await issueKey(s, {
      prefix: "sk_live",
      byteLength: 24,
      name: "rolled",
      externalId: `reroll_${n}`,
      meta: { a: 1 },
      expires: 4102444800000n,
      roles: [role],
      permissions: ["reroll.perm"],
      ratelimits: [{ name: "rrr", limit: 3n, duration: 1000n }],
      enabled: false,
    });
    const { data } = await s.api.keys.rerollKey({ keyId: k.keyId, expiration: 60_000n });
    expect(data?.keyId).not.toBe(k.keyId);
    // Checksummed, as the API's keys are: 24 bytes are 33 Base58 digits, then 6 of checksum.
    expect(data?.key).toMatch(/^sk_live_[1-9A-HJ-NP-Za-km-z]{39}$/);
    const old = await getKey(k.keyId);
    const fresh = await getKey(data?.keyId ?? "");
    expect(old.expires).toBe(BigInt(s.clock.now() + 60_000));
    expect(settingsOf(fresh)).toEqual(settingsOf(old));
    expect(fresh.expires).toBe(4102444800000n);
    expect(fresh.start).toBe(data?.key.slice(0, "sk_live_".length + 4));
  });

  it("lets the old key spend the new key's balance: one balance, not two", async () => {
    const k = await issueKey(s, { credits: { remaining: 10n } });
    const { data } = await s.api.keys.rerollKey({ keyId: k.keyId, expiration: 3_600_000n });
    const fresh = data?.keyId ?? "";
    const decrement = (keyId: string, value: bigint) =>
      s.api.keys.updateCredits({ keyId, operation: CreditsOperation.DECREMENT, value });
    await decrement(k.keyId, 3n);
    expect((await getKey(fresh)).credits?.remaining).toBe(7n);
    expect((await getKey(k.keyId)).credits?.remaining).toBe(7n);
    await decrement(fresh, 2n);
    expect((await getKey(k.keyId)).credits?.remaining).toBe(5n);
  });

  it("never extends the old key's expiry, and expires it now with expiration 0", async () => {
    const soon = BigInt(s.clock.now() + 1000);
    const k = await issueKey(s, { expires: soon });
    await s.api.keys.rerollKey({ keyId: k.keyId, expiration: 86_400_000n });
    expect((await getKey(k.keyId)).expires).toBe(soon);
    const k2 = await issueKey(s);
    await s.api.keys.rerollKey({ keyId: k2.keyId, expiration: 0n });
    expect((await getKey(k2.keyId)).expires).toBe(BigInt(s.clock.now()));
  });

  it("answers an unknown key with 404, a negative expiration with 400, and 403 naming create_key", async () => {
    const missing = await refusal(s.api.keys.rerollKey({ keyId: "key_none", expiration: 0n }));
    expect(missing).toMatchObject({ status: 404, errorCode: "err:svc:data:key_not_found" });
    const k = await issueKey(s);
    const negative = await refusal(s.api.keys.rerollKey({ keyId: k.keyId, expiration: -1n }));
    expect(negative.status).toBe(400);
    expect(negative.errors.map((e) => e.location)).toEqual(["/expiration"]);
    const updater = s.as(await s.seed.rootKey(["api.*.update_key"]));
    const r = await refusal(updater.keys.rerollKey({ keyId: k.keyId, expiration: 0n }));
    expect(r.status).toBe(403);
    expect(r.detail).toContain(`api.${k.apiId}.create_key`);
  });
});
