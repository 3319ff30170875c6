import { create } from "@bufbuild/protobuf";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { describe, expect, it } from "vitest";
import { KeysService, UpdateKeyRequestSchema } from "../../../gen/latchkey/v2/keys_pb.js";
import { DOORS, useServer } from "../../harness/server.js";

const DAY = 86_400_000;
const s = useServer();
let n = 0;

// biome-ignore lint/suspicious/noExplicitAny: key records are read as JSON
type Rec = any;
const names = (xs: { name: string }[] | undefined) => xs?.map((x) => x.name);

interface Case {
  field: string;
  initial: () => unknown;
  value: () => unknown;
  read: (k: Rec) => unknown;
  /** What a read shows after the value is set (defaults to the value). */
  afterValue?: (v: unknown) => unknown;
}

const extA = `upd_a_${Date.now()}`;
const extB = `upd_b_${Date.now()}`;
const cases: Case[] = [
  { field: "name", initial: () => "old name", value: () => "new name", read: (k) => k.name },
  {
    field: "externalId",
    initial: () => extA,
    value: () => extB,
    read: (k) => k.identity?.externalId,
  },
  {
    field: "meta",
    initial: () => ({ a: 1 }),
    value: () => ({ b: { c: [2] } }),
    read: (k) => k.meta,
  },
  {
    field: "expires",
    initial: () => 4102444800000,
    value: () => 4000000000000,
    read: (k) => k.expires,
  },
  {
    field: "credits",
    initial: () => ({ remaining: 5, refill: { interval: "daily", amount: 50 } }),
    value: () => ({ remaining: 9 }),
    read: (k) => k.credits,
  },
  {
    field: "ratelimits",
    initial: () => [{ name: "old_limit", limit: 1, duration: 1000 }],
    value: () => [{ name: "new_limit", limit: 2, duration: 2000 }],
    read: (k) => names(k.ratelimits),
    afterValue: () => ["new_limit"],
  },
  {
    field: "roles",
    initial: () => ["upd_role_a"],
    value: () => ["upd_role_b"],
    read: (k) => k.roles,
  },
  {
    field: "permissions",
    initial: () => ["upd.perm.a"],
    value: () => ["upd.perm.b"],
    read: (k) => k.permissions,
  },
];

async function keyWithEverything() {
  const body: Record<string, unknown> = {};
  for (const c of cases) body[c.field] = c.initial();
  return s.seed.key(body);
}

function withoutField(k: Rec, field: string): Rec {
  const copy = { ...k };
  delete copy.updatedAt;
  if (field === "externalId") delete copy.identity;
  else delete copy[field];
  return copy;
}

describe.each(DOORS)("keys.updateKey via %s", (door) => {
  it.each(cases)("$field: omitted leaves it, null clears it, a value sets it", async (c) => {
    if (n++ === 0) {
      await s.call("json", "permissions.createRole", { name: "upd_role_a" });
      await s.call("json", "permissions.createRole", { name: "upd_role_b" });
    }
    for (const mode of ["omitted", "null", "value"] as const) {
      const k = await keyWithEverything();
      const before = (await s.call(door, "keys.getKey", { keyId: k.keyId })).data;
      const value = c.value();
      const body = {
        keyId: k.keyId,
        ...(mode === "null" ? { [c.field]: null } : mode === "value" ? { [c.field]: value } : {}),
      };
      const res = await s.call(door, "keys.updateKey", body);
      expect(res.status, `${c.field} ${mode}`).toBe(200);
      expect(res.data).toEqual({});
      const after = (await s.call(door, "keys.getKey", { keyId: k.keyId })).data;
      const expected =
        mode === "omitted"
          ? c.read(before)
          : mode === "null"
            ? undefined
            : (c.afterValue ?? ((v) => v))(value);
      expect(c.read(after), `${c.field} ${mode}`).toEqual(expected);
      expect(withoutField(after, c.field), `other fields after ${c.field} ${mode}`).toEqual(
        withoutField(before, c.field),
      );
    }
  });

  it("enables and disables, and answers null for enabled or keyId with 400", async () => {
    const k = await s.seed.key();
    expect((await s.call(door, "keys.updateKey", { keyId: k.keyId, enabled: false })).status).toBe(
      200,
    );
    expect((await s.call(door, "keys.getKey", { keyId: k.keyId })).data.enabled).toBe(false);
    expect((await s.call(door, "keys.updateKey", { keyId: k.keyId, enabled: true })).status).toBe(
      200,
    );
    expect((await s.call(door, "keys.getKey", { keyId: k.keyId })).data.enabled).toBe(true);
  });

  it("credits: refill null drops the refill; remaining left out keeps the balance, never unlimited", async () => {
    const initial = { remaining: 3, refill: { interval: "daily", amount: 10 } };
    const credits = async (body: Record<string, unknown>) => {
      const k = await s.seed.key({ credits: initial });
      const res = await s.call(door, "keys.updateKey", { keyId: k.keyId, credits: body });
      expect(res.status, JSON.stringify(body)).toBe(200);
      return (await s.call(door, "keys.getKey", { keyId: k.keyId })).data.credits;
    };
    expect(await credits({ remaining: 5, refill: null })).toEqual({ remaining: 5 });
    expect(await credits({ remaining: 5 })).toEqual({ remaining: 5 });
    // Left out of the object, remaining keeps the key's balance: leaving a member out never
    // makes a metered key free. Only null makes it unlimited.
    expect(await credits({ refill: null })).toEqual({ remaining: 3 });
    expect(await credits({})).toEqual({ remaining: 3 });
    expect(await credits({ remaining: null, refill: null })).toBeUndefined();
    expect(await credits({ remaining: null })).toBeUndefined();
  });

  it("keeps the balance with a refill already due applied when refill null drops the refill", async () => {
    const k = await s.seed.key({
      credits: { remaining: 3, refill: { interval: "daily", amount: 10 } },
    });
    s.clock.advance(DAY);
    const res = await s.call(door, "keys.updateKey", { keyId: k.keyId, credits: { refill: null } });
    expect(res.status).toBe(200);
    const after = (await s.call(door, "keys.getKey", { keyId: k.keyId })).data.credits;
    expect(after).toEqual({ remaining: 10 });
  });

  it("answers a refill that would leave remaining null with 400, and writes nothing", async () => {
    const k = await s.seed.key({ credits: { remaining: 3 } });
    const before = await s.snapshot();
    for (const credits of [
      { refill: { interval: "daily", amount: 5 } },
      { remaining: 1, refill: { interval: "daily", amount: 5, refillDay: 2 } },
    ]) {
      const res = await s.call(door, "keys.updateKey", { keyId: k.keyId, credits });
      expect(res.status).toBe(400);
    }
    expect(await s.changesSince(before)).toEqual({});
  });

  it("answers an unknown role with 404 and changes nothing", async () => {
    const k = await s.seed.key({ name: "keep" });
    const before = await s.snapshot();
    const res = await s.call(door, "keys.updateKey", {
      keyId: k.keyId,
      name: "changed",
      roles: ["no_such_role_x"],
    });
    expect(res.status).toBe(404);
    expect(res.error?.code).toBe("err:svc:data:role_not_found");
    expect(await s.changesSince(before)).toEqual({});
  });

  it("answers 404 for keys that are not there and 403 without update_key", async () => {
    for (const keyId of ["x", "key-1", `k${"x".repeat(255)}`]) {
      expect((await s.call(door, "keys.updateKey", { keyId, name: "n" })).status).toBe(404);
    }
    const k = await s.seed.key();
    const res = await s.call(
      door,
      "keys.updateKey",
      { keyId: k.keyId, name: "n" },
      await s.seed.rootKey(["api.*.read_key"]),
    );
    expect(res.status).toBe(403);
    expect(res.error?.detail).toContain(`api.${k.apiId}.update_key`);
  });

  it("audits the change", async () => {
    const k = await s.seed.key();
    const res = await s.call(door, "keys.updateKey", { keyId: k.keyId, name: "audited" });
    const audit = await s.db.query<{ event: string; description: string }>(
      "select event, description from audit_logs where request_id = $1",
      [res.requestId],
    );
    expect(audit).toEqual([{ event: "key.update", description: expect.stringContaining("name") }]);
  });
});

describe("keys.updateKey /v2 body rules", () => {
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
});

describe("keys.updateKey over gRPC without an update mask", () => {
  it("changes the fields that are set and clears nothing", async () => {
    const k = await s.seed.key({ name: "before", meta: { a: 1 } });
    const client = createClient(
      KeysService,
      createGrpcTransport({ baseUrl: `http://127.0.0.1:${s.app.grpcPort}` }),
    );
    await client.updateKey(create(UpdateKeyRequestSchema, { keyId: k.keyId, name: "after" }), {
      headers: { authorization: `Bearer ${s.rootKey}` },
    });
    const got = await s.call("json", "keys.getKey", { keyId: k.keyId });
    expect(got.data).toMatchObject({ name: "after", meta: { a: 1 } });
    await client.updateKey(
      create(UpdateKeyRequestSchema, { keyId: k.keyId, updateMask: { paths: ["meta"] } }),
      {
        headers: { authorization: `Bearer ${s.rootKey}` },
      },
    );
    expect((await s.call("json", "keys.getKey", { keyId: k.keyId })).data.meta).toBeUndefined();
  });
});
