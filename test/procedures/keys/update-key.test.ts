import { type JsonObject, type MessageInitShape, toJson } from "@bufbuild/protobuf";
import { beforeAll, describe, expect, it } from "vitest";
import { RefillInterval } from "../../../gen/latchkey/v2/common_pb.js";
import {
  type Key,
  KeySchema,
  type UpdateKeyRequest,
  type UpdateKeyRequestSchema,
} from "../../../gen/latchkey/v2/keys_pb.js";
import { useServer } from "../../harness/server.js";
import { refusal } from "../../harness/typed.js";
import { issueKey, type NewKey } from "./issue-key.js";

// keys.updateKey: changes the settings of a key. The update mask names the fields to change (a
// masked field left unset is cleared); without a mask the fields that are set change. The
// credits object and the lists replace the whole setting.

const DAY = 86_400_000;
const s = useServer();
/** An updateKey body as an object literal (not a message). */
type UpdateBody = Exclude<MessageInitShape<typeof UpdateKeyRequestSchema>, UpdateKeyRequest>;

const getKey = async (keyId: string) => (await s.api.keys.getKey({ keyId })).data as Key;
const mask = (...paths: string[]) => ({ updateMask: { paths } });

/** One setting of a key: how a key starts, the value it is changed to, and how a read shows it. */
interface Setting {
  /** The proto name, as the update mask names it. */
  path: string;
  /** The property of the key record in its JSON form that shows it. */
  shownAs: string;
  initial: NewKey;
  value: UpdateBody;
  read: (k: Key) => unknown;
  /** What `read` shows once the value is set. */
  shown: unknown;
}

const extA = `upd_a_${Date.now()}`;
const extB = `upd_b_${Date.now()}`;
const names = (xs: { name: string }[]) => xs.map((x) => x.name);
const SETTINGS: Setting[] = [
  {
    path: "name",
    shownAs: "name",
    initial: { name: "old name" },
    value: { name: "new name" },
    read: (k) => k.name,
    shown: "new name",
  },
  {
    path: "external_id",
    shownAs: "identity",
    initial: { externalId: extA },
    value: { externalId: extB },
    read: (k) => k.identity?.externalId,
    shown: extB,
  },
  {
    path: "meta",
    shownAs: "meta",
    initial: { meta: { a: 1 } },
    value: { meta: { b: { c: [2] } } },
    read: (k) => k.meta,
    shown: { b: { c: [2] } },
  },
  {
    path: "expires",
    shownAs: "expires",
    initial: { expires: 4102444800000n },
    value: { expires: 4000000000000n },
    read: (k) => k.expires,
    shown: 4000000000000n,
  },
  {
    path: "credits",
    shownAs: "credits",
    initial: {
      credits: { remaining: 5n, refill: { interval: RefillInterval.DAILY, amount: 50n } },
    },
    value: { credits: { remaining: 9n } },
    read: (k) => k.credits && { remaining: k.credits.remaining, refill: k.credits.refill },
    shown: { remaining: 9n },
  },
  {
    path: "ratelimits",
    shownAs: "ratelimits",
    initial: { ratelimits: [{ name: "old_limit", limit: 1n, duration: 1000n }] },
    value: { ratelimits: [{ name: "new_limit", limit: 2n, duration: 2000n }] },
    read: (k) => names(k.ratelimits),
    shown: ["new_limit"],
  },
  {
    path: "roles",
    shownAs: "roles",
    initial: { roles: ["upd_role_a"] },
    value: { roles: ["upd_role_b"] },
    read: (k) => k.roles,
    shown: ["upd_role_b"],
  },
  {
    path: "permissions",
    shownAs: "permissions",
    initial: { permissions: ["upd.perm.a"] },
    value: { permissions: ["upd.perm.b"] },
    read: (k) => k.permissions,
    shown: ["upd.perm.b"],
  },
];

/** What a cleared setting reads as: nothing, or an empty list. */
const cleared = (setting: Setting) => (Array.isArray(setting.shown) ? [] : undefined);

/** A key's record in its JSON form, without one setting and the time of the last change. */
function otherSettings(k: Key, setting: Setting): JsonObject {
  const json = toJson(KeySchema, k) as JsonObject;
  delete json.updatedAt;
  delete json[setting.shownAs];
  return json;
}

describe("keys.updateKey", () => {
  beforeAll(async () => {
    await s.api.permissions.createRole({ name: "upd_role_a" });
    await s.api.permissions.createRole({ name: "upd_role_b" });
  });

  it.each(SETTINGS)(
    "$path: left out of the mask it stays, masked and unset it clears, given it is set",
    async (setting) => {
      const initial = Object.assign({}, ...SETTINGS.map((c) => c.initial)) as NewKey;
      const modes: [string, UpdateBody, unknown][] = [
        ["left out", { enabled: true, ...mask("enabled") }, undefined],
        ["cleared", mask(setting.path), cleared(setting)],
        ["set", { ...setting.value, ...mask(setting.path) }, setting.shown],
      ];
      for (const [mode, body, expected] of modes) {
        const { keyId } = await issueKey(s, initial);
        const before = await getKey(keyId);
        await s.api.keys.updateKey({ ...body, keyId });
        const after = await getKey(keyId);
        const shown = mode === "left out" ? setting.read(before) : expected;
        expect(setting.read(after), `${setting.path} ${mode}`).toEqual(shown);
        expect(otherSettings(after, setting), `the other settings, ${mode}`).toEqual(
          otherSettings(before, setting),
        );
      }
    },
  );

  it("enables and disables", async () => {
    const { keyId } = await issueKey(s);
    await s.api.keys.updateKey({ keyId, enabled: false });
    expect((await getKey(keyId)).enabled).toBe(false);
    await s.api.keys.updateKey({ keyId, enabled: true });
    expect((await getKey(keyId)).enabled).toBe(true);
  });

  it("changes the fields that are set and clears nothing without an update mask", async () => {
    const { keyId } = await issueKey(s, { name: "before", meta: { a: 1 } });
    await s.api.keys.updateKey({ keyId, name: "after" });
    expect(await getKey(keyId)).toMatchObject({ name: "after", meta: { a: 1 } });
    await s.api.keys.updateKey({ keyId, ...mask("meta") });
    expect((await getKey(keyId)).meta).toBeUndefined();
  });

  describe("credits", () => {
    const daily = { interval: RefillInterval.DAILY, amount: 10n };

    it.each([
      ["remaining and refill masked, remaining given", ["remaining", "refill"], 5n, 5n],
      ["remaining masked and given", ["remaining"], 5n, 5n],
      // Left out of the mask, remaining keeps the key's balance: a member not sent never makes
      // a metered key free. Only a masked, unset remaining makes it unlimited.
      ["refill masked, remaining left out", ["refill"], undefined, 3n],
      ["no member masked", [], undefined, 3n],
      ["remaining and refill masked, neither given", ["remaining", "refill"], undefined, undefined],
      ["remaining masked, not given", ["remaining"], undefined, undefined],
    ] as const)("%s: drops the refill", async (_, members, given, left) => {
      const { keyId } = await issueKey(s, { credits: { remaining: 3n, refill: daily } });
      const paths = ["credits", ...members.map((m) => `credits.${m}`)];
      await s.api.keys.updateKey({ keyId, credits: { remaining: given }, ...mask(...paths) });
      const credits = (await getKey(keyId)).credits;
      expect(credits?.remaining).toBe(left);
      expect(credits?.refill).toBeUndefined();
    });

    it("keeps the balance with a refill already due applied when it drops the refill", async () => {
      const { keyId } = await issueKey(s, { credits: { remaining: 3n, refill: daily } });
      s.clock.advance(DAY);
      await s.api.keys.updateKey({ keyId, credits: {}, ...mask("credits", "credits.refill") });
      const credits = (await getKey(keyId)).credits;
      expect(credits?.remaining).toBe(10n);
      expect(credits?.refill).toBeUndefined();
    });

    it("answers a refill that would leave remaining unset with 400, writing nothing", async () => {
      const { keyId } = await issueKey(s, { credits: { remaining: 3n } });
      const before = await s.snapshot();
      for (const credits of [
        { refill: { interval: RefillInterval.DAILY, amount: 5n } },
        { remaining: 1n, refill: { interval: RefillInterval.DAILY, amount: 5n, refillDay: 2 } },
      ]) {
        expect((await refusal(s.api.keys.updateKey({ keyId, credits }))).status).toBe(400);
      }
      expect(await s.changesSince(before)).toEqual({});
    });
  });

  it("answers an unknown role with 404 role_not_found and changes nothing", async () => {
    const { keyId } = await issueKey(s, { name: "keep" });
    const before = await s.snapshot();
    const r = await refusal(
      s.api.keys.updateKey({ keyId, name: "changed", roles: ["no_such_role_x"] }),
    );
    expect(r).toMatchObject({ status: 404, errorCode: "err:svc:data:role_not_found" });
    expect(await s.changesSince(before)).toEqual({});
  });

  it("answers 404 for keys that are not there and 403 without update_key", async () => {
    for (const keyId of ["x", "key-1", `k${"x".repeat(255)}`]) {
      const r = await refusal(s.api.keys.updateKey({ keyId, name: "n" }));
      expect(r, keyId).toMatchObject({ status: 404, errorCode: "err:svc:data:key_not_found" });
    }
    const k = await issueKey(s);
    const reader = s.as(await s.seed.rootKey(["api.*.read_key"]));
    const r = await refusal(reader.keys.updateKey({ keyId: k.keyId, name: "n" }));
    expect(r.status).toBe(403);
    expect(r.detail).toContain(`api.${k.apiId}.update_key`);
  });

  it("audits the change", async () => {
    const { keyId } = await issueKey(s);
    const res = await s.api.keys.updateKey({ keyId, name: "audited" });
    const audit = await s.db.query<{ event: string; description: string }>(
      "select event, description from audit_logs where request_id = $1",
      [res.meta?.requestId],
    );
    expect(audit).toEqual([{ event: "key.update", description: expect.stringContaining("name") }]);
  });

  describe("on the /v2 JSON door", () => {
    it.each([
      [{ keyId: null, name: "n" }, "/keyId"],
      [{ name: "n" }, "/keyId"],
      [{ keyId: "key_x", enabled: null }, "/enabled"],
      [{ keyId: "key_x", updateMask: "name" }, "/updateMask"],
      [{ keyId: "key_x", expires: "4000000000000" }, "/expires"],
      [{ keyId: "key_x", key_id: "key_x" }, "/key_id"],
    ])("answers %j with 400 at %s", async (body, location) => {
      const res = await s.call("json", "keys.updateKey", body);
      expect(res.status).toBe(400);
      expect(res.error?.errors?.map((e) => e.location)).toContain(location);
    });

    it("clears a field sent as null and leaves one left out", async () => {
      const { keyId } = await issueKey(s, { name: "named", meta: { a: 1 } });
      expect((await s.call("json", "keys.updateKey", { keyId, name: null })).status).toBe(200);
      const k = await getKey(keyId);
      expect([k.name, k.meta]).toEqual([undefined, { a: 1 }]);
    });

    it("keeps the balance for {refill: null} and makes the key unlimited for {remaining: null}", async () => {
      const credits = { remaining: 3n, refill: { interval: RefillInterval.DAILY, amount: 10n } };
      const kept = await issueKey(s, { credits });
      const body = { keyId: kept.keyId, credits: { refill: null } };
      expect((await s.call("json", "keys.updateKey", body)).status).toBe(200);
      const balance = (await getKey(kept.keyId)).credits;
      expect([balance?.remaining, balance?.refill]).toEqual([3n, undefined]);
      const freed = await issueKey(s, { credits });
      const unlimited = { keyId: freed.keyId, credits: { remaining: null } };
      expect((await s.call("json", "keys.updateKey", unlimited)).status).toBe(200);
      expect((await getKey(freed.keyId)).credits).toBeUndefined();
    });
  });
});
