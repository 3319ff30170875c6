import { createHash, randomBytes } from "node:crypto";
import type { DescMethod } from "@bufbuild/protobuf";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { namespaceOf } from "../../src/services/procedures.js";
import { type CallResult, SERVICES } from "../harness/doors.js";
import { currentEngine } from "../harness/engine.js";
import { useServer } from "../harness/server.js";
import { changedTables, type Fingerprint, fingerprint } from "../harness/snapshot.js";

const s = useServer();
// Deliveries are not this file's subject: no attempt may change rows behind its fingerprints.
beforeAll(() => s.app.webhooks.stop());

/** Every procedure the server serves, derived from the contract. */
const PROCEDURES = SERVICES.flatMap((service) =>
  service.methods.map((method) => ({
    name: `${namespaceOf(service)}.${method.localName}`,
    method,
  })),
);

// Fixed so that a failure reproduces; the same bodies go through both doors. Each engine's run
// draws its own bodies (the seed differs by engine), so the two runs of `npm test` together try
// twice as many; FUZZ_RUNS=<n> tries more per procedure.
const SEED = 20_261_122 + (currentEngine() === "postgres" ? 1_000 : 0);
const RUNS = Number(process.env.FUZZ_RUNS ?? 12);
// Under the 1 MiB body limit on purpose: an oversized body is refused before it is decoded.
const MAX_BODY_CHARS = 900_000;

type Body = Record<string, unknown>;

// ----- What a fuzzed body is made of ---------------------------------------------------------

const oddStrings = fc.constantFrom(
  "",
  " ",
  "\u0000",
  "a\u0000b",
  "\uD800",
  "\uDC00x",
  "x\uDBFF",
  "\u202Eevil\u202C",
  "\u200Fשלום",
  "🔑🗝️",
  "\uFEFF",
  "null",
  "__proto__",
  "' or 1=1 --",
  "%s%n%x",
  "../../etc/passwd",
  "*.*.*",
  "api_",
  "key_",
  "2026-01-01T00:00:00Z",
);

const hugeString = fc
  .tuple(
    fc.integer({ min: 1_000, max: 100_000 }),
    fc.constantFrom("a", "é", "🔑", "\u0000", "\uD800", "_"),
  )
  .map(([n, c]) => c.repeat(Math.max(1, Math.floor(n / c.length))));

const strings = fc.oneof(
  fc.string({ unit: "binary", maxLength: 40 }),
  fc.string({ unit: "grapheme", maxLength: 40 }),
  oddStrings,
  hugeString,
);

const numbers = fc.oneof(
  fc.constantFrom(
    1e308,
    -1e308,
    -0,
    2 ** 64,
    -(2 ** 64),
    2 ** 53,
    2 ** 53 - 1,
    -(2 ** 53),
    2 ** 31,
    -(2 ** 31) - 1,
    2 ** 32,
    4_102_444_800_001,
    0.5,
    -1,
    5e-324,
  ),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
);

const scalars = fc.oneof(strings, numbers, fc.boolean(), fc.constant(null));

/** A value wrapped in 50 to 300 arrays or objects. */
const deeplyNested = fc
  .tuple(fc.integer({ min: 50, max: 300 }), fc.boolean(), scalars)
  .map(([depth, asArray, leaf]) => {
    let v: unknown = leaf;
    for (let i = 0; i < depth; i++) v = asArray ? [v] : { a: v };
    return v;
  });

const { value: anyValue } = fc.letrec<{ value: unknown; array: unknown[]; object: Body }>(
  (tie) => ({
    value: fc.oneof({ maxDepth: 3 }, scalars, deeplyNested, tie("array"), tie("object")),
    array: fc.array(tie("value"), { maxLength: 4 }),
    object: fc.dictionary(fc.oneof(fc.string({ maxLength: 8 }), oddStrings), tie("value"), {
      maxKeys: 4,
    }),
  }),
);

/** Sets a key as an own property, `__proto__` included. */
function withKey(body: Body, key: string, v: unknown): Body {
  const out = { ...body };
  Object.defineProperty(out, key, {
    value: v,
    enumerable: true,
    writable: true,
    configurable: true,
  });
  return out;
}

/** The JSON paths of every member of a valid body, nested ones included. */
function pathsOf(v: unknown, prefix: (string | number)[] = []): (string | number)[][] {
  if (v === null || typeof v !== "object") return [];
  const entries = Array.isArray(v) ? v.map((x, i) => [i, x] as const) : Object.entries(v);
  return entries.flatMap(([k, x]) => [[...prefix, k], ...pathsOf(x, [...prefix, k])]);
}

/** A copy of `body` with the member at `path` replaced, or removed when `v` is undefined. */
function replaceAt(body: unknown, path: (string | number)[], v: unknown): unknown {
  const [head, ...rest] = path;
  if (head === undefined) return v;
  if (Array.isArray(body)) {
    const copy = [...body];
    if (rest.length === 0 && v === undefined) copy.splice(head as number, 1);
    else copy[head as number] = replaceAt(copy[head as number], rest, v);
    return copy;
  }
  const copy = { ...(body as Body) };
  if (rest.length === 0 && v === undefined) delete copy[head as string];
  else copy[head as string] = replaceAt(copy[head as string], rest, v);
  return copy;
}

function valueAt(body: unknown, path: (string | number)[]): unknown {
  return path.reduce((v: unknown, k) => (v as Record<string | number, unknown>)[k], body);
}

/** Random values of the same JSON kind as `v`: they get past decoding, to the bounds and beyond. */
function sameKind(v: unknown): fc.Arbitrary<unknown> {
  if (typeof v === "string") return strings;
  if (typeof v === "number") return numbers;
  if (typeof v === "boolean") return fc.boolean();
  if (Array.isArray(v)) return fc.array(v.length > 0 ? sameKind(v[0]) : anyValue, { maxLength: 5 });
  return anyValue;
}

/** Random bodies for a procedure: anything, its fields with random values, extras, mutants. */
function bodiesFor(method: DescMethod, valid: Body): fc.Arbitrary<unknown> {
  const fields = method.input.fields.map((f) => f.jsonName);
  const snake = method.input.fields.map((f) => f.name).filter((n) => !fields.includes(n));
  const extraKey = fc.oneof(
    fc.string({ maxLength: 12 }),
    fc.constantFrom("__proto__", "constructor", "workspaceId", "updateMask", "meta", ...snake),
  );
  const randomFields = fc.record(Object.fromEntries(fields.map((f) => [f, anyValue])), {
    requiredKeys: [],
  });
  const withExtras = fc
    .tuple(fc.oneof(randomFields, fc.constant(valid)), extraKey, anyValue)
    .map(([b, k, v]) => withKey(b as Body, k, v));
  const paths = pathsOf(valid);
  const mutants =
    paths.length === 0
      ? fc.constant(valid)
      : fc.oneof(
          fc
            .constantFrom(...paths)
            .chain((p) =>
              fc.oneof(anyValue, sameKind(valueAt(valid, p))).map((v) => replaceAt(valid, p, v)),
            ),
          fc.constantFrom(...paths).map((p) => replaceAt(valid, p, undefined)),
        );
  return fc
    .oneof(
      { arbitrary: anyValue, weight: 1 },
      { arbitrary: randomFields, weight: 2 },
      { arbitrary: withExtras, weight: 1 },
      { arbitrary: mutants, weight: 4 },
    )
    .filter((b) => JSON.stringify(b).length < MAX_BODY_CHARS);
}

// ----- Valid example bodies ------------------------------------------------------------------

/** Objects of the default workspace that example bodies name. */
interface Fixture {
  apiId: string;
  keyId: string;
  key: string;
  slug: string;
  role: string;
  roleId: string;
  externalId: string;
  namespace: string;
  reservationId: string;
  endpointId: string;
  deliveryId: string;
}

let n = 0;

async function ok(procedure: string, body: Body): Promise<CallResult> {
  const res = await s.call("json", procedure, body);
  if (res.status !== 200) throw new Error(`${procedure}: ${JSON.stringify(res.error)}`);
  return res;
}

async function fixture(): Promise<Fixture> {
  const tag = `fz${++n}`;
  const slug = `${tag}.read`;
  const role = `${tag}_role`;
  const externalId = `${tag}_user`;
  const namespace = `${tag}.ns`;
  await s.seed.permission(slug);
  // A workspace holds at most 20 endpoints: each fixture's replaces the last one's.
  await s.db.query("delete from webhook_endpoints where workspace_id = $1", [s.workspaceId]);
  const endpointId = (
    await ok("webhooks.createEndpoint", {
      url: `https://hooks.example.com/${tag}`,
      eventTypes: ["key.created"],
    })
  ).data.endpoint.id as string;
  const roleId = (await ok("permissions.createRole", { name: role, permissions: [slug] })).data
    .roleId;
  await ok("identities.createIdentity", {
    externalId,
    ratelimits: [{ name: "fzi", limit: 100, duration: 60_000 }],
  });
  const k = await s.seed.key({
    prefix: tag,
    externalId,
    roles: [role],
    permissions: [slug],
    credits: { remaining: 1000 },
    ratelimits: [{ name: "fzk", limit: 100, duration: 60_000 }],
  });
  // A namespace is created by its first limit call.
  await ok("ratelimit.limit", { namespace, identifier: "seed", limit: 1, duration: 1000, cost: 0 });
  await ok("ratelimit.setOverride", { namespace, identifier: "vip", limit: 5, duration: 60_000 });
  const reserved = await ok("keys.verifyKey", { key: k.key, credits: { reserve: 2 } });
  const reservationId = reserved.data.reservationId as string;
  const [delivery] = await s.db.query<{ id: string }>(
    "select id from webhook_deliveries where endpoint_id = $1",
    [endpointId],
  );
  return {
    ...k,
    slug,
    role,
    roleId,
    externalId,
    namespace,
    reservationId,
    endpointId,
    deliveryId: delivery?.id as string,
  };
}

const sha256 = () => createHash("sha256").update(randomBytes(16)).digest("base64");

/** One body per procedure that succeeds against a fresh fixture. */
const EXAMPLES: Record<string, (f: Fixture) => Body> = {
  "liveness.check": () => ({}),
  "apis.createApi": () => ({ name: "fuzzed api" }),
  "apis.getApi": (f) => ({ apiId: f.apiId }),
  "apis.updateApi": (f) => ({
    apiId: f.apiId,
    name: "fuzzed api renamed",
    keyFormat: "plain",
    leakPolicy: "notify",
    allowedCidrs: ["10.0.0.0/8", "2001:db8::/32"],
  }),
  "apis.deleteApi": (f) => ({ apiId: f.apiId }),
  "apis.listApis": () => ({ limit: 10 }),
  "apis.listKeys": (f) => ({ apiId: f.apiId, limit: 10, externalId: f.externalId }),
  "keys.createKey": (f) => ({
    apiId: f.apiId,
    prefix: "fz",
    name: "fuzzed",
    byteLength: 16,
    externalId: f.externalId,
    meta: { plan: "pro", seats: 3, tags: ["a"] },
    roles: [f.role],
    permissions: [f.slug, "fz.write"],
    expires: 4_102_444_800_000,
    credits: { remaining: 10, refill: { interval: "monthly", amount: 10, refillDay: 1 } },
    ratelimits: [{ name: "requests", limit: 10, duration: 1000, autoApply: true }],
    enabled: true,
  }),
  "keys.verifyKey": (f) => ({
    key: f.key,
    tags: ["path=/x"],
    permissions: f.slug,
    credits: { cost: 1 },
    ratelimits: [{ name: "fzk", cost: 1 }],
  }),
  "keys.getKey": (f) => ({ keyId: f.keyId }),
  "keys.whoami": (f) => ({ key: f.key }),
  "keys.updateKey": (f) => ({
    keyId: f.keyId,
    name: "renamed",
    meta: { a: 1 },
    expires: null,
    credits: { remaining: 5 },
    ratelimits: [{ name: "fzk", limit: 3, duration: 1000 }],
    enabled: true,
    roles: [f.role],
    permissions: [f.slug],
  }),
  "keys.updateCredits": (f) => ({ keyId: f.keyId, operation: "increment", value: 5 }),
  "keys.settleCredits": (f) => ({ reservationId: f.reservationId, used: 1 }),
  "keys.deleteKey": (f) => ({ keyId: f.keyId, permanent: false }),
  "keys.rerollKey": (f) => ({ keyId: f.keyId, expiration: 60_000 }),
  "keys.migrateKeys": (f) => ({
    migrationId: "fuzz",
    apiId: f.apiId,
    keys: [{ hash: sha256(), name: "migrated", credits: { remaining: 3 }, roles: [f.role] }],
  }),
  "keys.addPermissions": (f) => ({ keyId: f.keyId, permissions: ["fz.extra"] }),
  "keys.removePermissions": (f) => ({ keyId: f.keyId, permissions: [f.slug] }),
  "keys.setPermissions": (f) => ({ keyId: f.keyId, permissions: [f.slug, "fz.other"] }),
  "keys.addRoles": (f) => ({ keyId: f.keyId, roles: [f.role] }),
  "keys.removeRoles": (f) => ({ keyId: f.keyId, roles: [f.role] }),
  "keys.setRoles": (f) => ({ keyId: f.keyId, roles: [f.role] }),
  "identities.createIdentity": (f) => ({
    externalId: `${f.externalId}_2`,
    meta: { tier: "gold" },
    ratelimits: [{ name: "requests", limit: 10, duration: 1000 }],
  }),
  "identities.getIdentity": (f) => ({ identity: f.externalId }),
  "identities.listIdentities": () => ({ limit: 10, search: "fz" }),
  "identities.updateIdentity": (f) => ({
    identity: f.externalId,
    meta: { tier: "silver" },
    ratelimits: [{ name: "fzi", limit: 50, duration: 60_000 }],
  }),
  "identities.deleteIdentity": (f) => ({ identity: f.externalId }),
  "permissions.createPermission": (f) => ({
    name: `${f.slug}.new`,
    slug: `${f.slug}.new`,
    description: "new",
  }),
  "permissions.getPermission": (f) => ({ permission: f.slug }),
  "permissions.listPermissions": () => ({ limit: 10, search: "fz" }),
  "permissions.deletePermission": (f) => ({ permission: f.slug }),
  "permissions.createRole": (f) => ({
    name: `${f.role}_2`,
    description: "second",
    permissions: [f.slug],
  }),
  "permissions.getRole": (f) => ({ role: f.role }),
  "permissions.listRoles": () => ({ limit: 10, search: "fz" }),
  "permissions.deleteRole": (f) => ({ role: f.role }),
  "permissions.setRolePermissions": (f) => ({ roleId: f.roleId, permissions: [f.slug] }),
  "ratelimit.limit": (f) => ({
    namespace: f.namespace,
    identifier: "u1",
    limit: 10,
    duration: 60_000,
    cost: 1,
  }),
  "ratelimit.multiLimit": (f) => ({
    limits: [{ namespace: f.namespace, identifier: "u1", limit: 10, duration: 60_000, cost: 1 }],
  }),
  "ratelimit.setOverride": (f) => ({
    namespace: f.namespace,
    identifier: "gold*",
    limit: 100,
    duration: 60_000,
  }),
  "ratelimit.getOverride": (f) => ({ namespace: f.namespace, identifier: "vip" }),
  "ratelimit.listOverrides": (f) => ({ namespace: f.namespace, limit: 10 }),
  "ratelimit.deleteOverride": (f) => ({ namespace: f.namespace, identifier: "vip" }),
  "analytics.getVerifications": () => ({
    query: "select outcome, sum(count)::int as n from key_verifications_per_day_v1 group by 1",
  }),
  "analytics.getCreditUsage": (f) => ({
    keyId: f.keyId,
    start: 0,
    end: 3 * 86_400_000,
    granularity: "day",
  }),
  "analytics.listAuditLogs": (f) => ({ resourceId: f.apiId, limit: 10 }),
  "webhooks.createEndpoint": () => ({
    url: "https://hooks.example.com/fuzz",
    eventTypes: ["key.created", "credits.low"],
    description: "fuzz",
    creditsLowThreshold: 5,
  }),
  "webhooks.listEndpoints": () => ({ limit: 10 }),
  "webhooks.updateEndpoint": (f) => ({
    endpointId: f.endpointId,
    eventTypes: ["key.deleted"],
    enabled: true,
  }),
  "webhooks.deleteEndpoint": (f) => ({ endpointId: f.endpointId }),
  "webhooks.rotateSecret": (f) => ({ endpointId: f.endpointId, previousSecretExpiresInMs: 1000 }),
  "webhooks.listDeliveries": (f) => ({ endpointId: f.endpointId, limit: 5 }),
  "webhooks.redeliver": (f) => ({ endpointId: f.endpointId, deliveryId: f.deliveryId }),
};

function exampleOf(procedure: string): (f: Fixture) => Body {
  const example = EXAMPLES[procedure];
  if (!example) throw new Error(`no example body for ${procedure}: add one to EXAMPLES`);
  return example;
}

// ----- The checks ----------------------------------------------------------------------------

type FuzzDoor = "json" | "connect";
const histograms: Record<FuzzDoor, Map<string, number>> = { json: new Map(), connect: new Map() };

function tally(door: FuzzDoor, outcome: string): void {
  histograms[door].set(outcome, (histograms[door].get(outcome) ?? 0) + 1);
}

/** The state taken with no analytics event pending, so a timer cannot write during a call. */
async function settledState(): Promise<Fingerprint> {
  await s.app.deps.events.flush();
  return fingerprint(s.db);
}

/**
 * The database as the previous call left it. A refused call leaves it unchanged (that is
 * checked), so its "after" serves as the next call's "before": one fingerprint per call.
 */
let known: Fingerprint | undefined;

async function stateBefore(): Promise<Fingerprint> {
  known ??= await settledState();
  return known;
}

async function expectUnchangedSince(before: Fingerprint): Promise<void> {
  const after = await settledState();
  expect(changedTables(before, after), "tables a refused call changed").toEqual([]);
  known = after;
}

function expectEnvelope(res: CallResult): void {
  expect(res.status).toBeGreaterThanOrEqual(200);
  expect(res.status).toBeLessThan(500);
  expect(res.requestId).toMatch(/^req_/);
  if (res.status === 200) return;
  expect(res.error?.code).toMatch(/^err:svc:/);
  expect(res.error?.title).toEqual(expect.stringMatching(/\S/));
  expect(res.error?.detail).toEqual(expect.stringMatching(/\S/));
}

/**
 * A body the /v2 JSON form cannot express as a message (a string where an int64 goes, say)
 * cannot go through the Connect client: it goes to the Connect door as raw Connect JSON,
 * which protobuf JSON decodes by its own rules before our interceptors see it.
 */
async function rawConnect(method: DescMethod, body: unknown): Promise<void> {
  const before = await stateBefore();
  const res = await fetch(`${s.url}/${method.parent.typeName}/${method.name}`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${s.rootKey}` },
    body: JSON.stringify(body),
  });
  const json = (await res.json()) as { code?: unknown };
  tally("connect", `raw ${res.status}`);
  expect(res.status).toBeGreaterThanOrEqual(200);
  expect(res.status).toBeLessThan(500);
  if (res.status === 200) {
    known = undefined;
    return;
  }
  expect(json.code).toEqual(expect.stringMatching(/^[a-z_]+$/));
  expect(["internal", "unknown"]).not.toContain(json.code);
  await expectUnchangedSince(before);
}

async function fuzzOnce(door: FuzzDoor, procedure: string, method: DescMethod, body: unknown) {
  const before = await stateBefore();
  let res: CallResult;
  try {
    res = await s.call(door, procedure, body);
  } catch (err) {
    if (door === "connect" && String(err).includes("test body is not valid")) {
      return rawConnect(method, body);
    }
    throw err;
  }
  tally(door, String(res.status));
  expectEnvelope(res);
  if (res.status === 200) known = undefined;
  else await expectUnchangedSince(before);
}

describe.each(["json", "connect"] as const)("random bodies via %s", (door) => {
  afterAll(() => {
    const h = histograms[door];
    const calls = [...h.values()].reduce((a, b) => a + b, 0);
    const statuses = Object.fromEntries([...h].sort(([a], [b]) => a.localeCompare(b)));
    console.log(`[fuzz] ${door} door: ${calls} calls, statuses ${JSON.stringify(statuses)}`);
  });

  it.each(PROCEDURES)(
    "$name: never 5xx, always the envelope, nothing written when refused",
    async ({ name, method }) => {
      const valid = exampleOf(name)(await fixture());
      known = undefined;
      await fc.assert(
        fc.asyncProperty(bodiesFor(method, valid), (body) => fuzzOnce(door, name, method, body)),
        { seed: SEED, numRuns: RUNS, endOnFailure: true },
      );
    },
  );
});

describe("bodies that are not JSON", () => {
  const broken: (string | Uint8Array)[] = [
    "",
    "{",
    "}",
    "not json",
    "{'name': 'x'}",
    '{"name": "abc",}',
    "[1, 2",
    "\u0000",
    '{"a": NaN}',
    '{"a": Infinity}',
    '{"a": 1}{"b": 2}',
    "undefined",
    new Uint8Array([0x7b, 0xff, 0xfe, 0x7d]),
  ];

  it.each(PROCEDURES.map((p) => p.name))(
    "%s answers broken and truncated JSON with 400 in the envelope, writing nothing",
    async (name) => {
      const placeholder = exampleOf(name)({
        apiId: "api_x",
        keyId: "key_x",
        key: "fz_x",
        slug: "fz.read",
        role: "fz_role",
        roleId: "role_x",
        externalId: "user_x",
        namespace: "fz.ns",
        endpointId: "whep_x",
        deliveryId: "msg_x",
        reservationId: "res_x",
      });
      const text = JSON.stringify(placeholder);
      const truncated = [1, Math.floor(text.length / 2), text.length - 1]
        .filter((at) => at > 0 && at < text.length)
        .map((at) => text.slice(0, at));
      const before = await stateBefore();
      for (const body of [...broken, ...truncated]) {
        const res = await s.raw(`/v2/${name}`, {
          method: "POST",
          headers: { "content-type": "application/json", authorization: `Bearer ${s.rootKey}` },
          body,
        });
        expect(res.status, `${name} with ${JSON.stringify(String(body))}`).toBe(400);
        expect(res.body.meta.requestId).toMatch(/^req_/);
        expect(res.headers.get("x-request-id")).toBe(res.body.meta.requestId);
        expect(res.body.error.type).toMatch(/\/errors-v2\/svc\/application\/invalid_input$/);
        expect(res.body.error.title).toEqual(expect.stringMatching(/\S/));
        expect(res.body.error.detail).toEqual(expect.stringMatching(/\S/));
        expect(res.body.error.errors).toEqual([
          expect.objectContaining({ location: "", message: expect.stringMatching(/JSON/) }),
        ]);
      }
      await expectUnchangedSince(before);
    },
  );
});

// Last, so that the fuzzing above runs on a smaller database (a fingerprint per call).
describe("the example bodies", () => {
  it.each(PROCEDURES.map((p) => p.name))("%s succeeds with its example body", async (name) => {
    const res = await s.call("json", name, exampleOf(name)(await fixture()));
    known = undefined;
    expect(res.error).toBeUndefined();
    expect(res.status).toBe(200);
  });
});

describe("what fuzzing found", () => {
  it.each([
    ["U+0000 in a name", "apis.createApi", () => ({ name: "a\u0000bc" }), "/name"],
    ["U+0000 in a lookup", "permissions.getRole", () => ({ role: "r\u0000le" }), "/role"],
    ["U+0000 in a search", "identities.listIdentities", () => ({ search: "\u0000" }), "/search"],
    [
      "U+0000 in a meta key",
      "keys.createKey",
      (f: Fixture) => ({ apiId: f.apiId, meta: { "a\u0000": 1 } }),
      "/meta/a\u0000",
    ],
    [
      "U+0000 in a meta value",
      "identities.updateIdentity",
      (f: Fixture) => ({ identity: f.externalId, meta: { tier: ["a\u0000b"] } }),
      "/meta/tier/0",
    ],
    [
      "an unpaired surrogate in a meta value",
      "keys.createKey",
      (f: Fixture) => ({ apiId: f.apiId, meta: { a: "x\uD800" } }),
      "/meta/a",
    ],
    [
      "an unpaired surrogate in a name",
      "keys.createKey",
      (f: Fixture) => ({ apiId: f.apiId, name: "\uDC00key" }),
      "/name",
    ],
  ] as const)("answers %s with 400 naming it, writing nothing", async (_, procedure, body, at) => {
    const request = body(await fixture());
    const before = await settledState();
    // Protobuf binary carries UTF-8, where an unpaired surrogate becomes U+FFFD on the way:
    // only JSON can deliver one.
    const doors = /\\ud[89a-f]/i.test(JSON.stringify(request)) ? ["json"] : ["json", "connect"];
    for (const door of doors as FuzzDoor[]) {
      const res = await s.call(door, procedure, request);
      expect(res.status).toBe(400);
      expect(res.error?.errors?.[0]?.location).toBe(at);
    }
    known = undefined;
    expect(changedTables(before, await settledState())).toEqual([]);
  });

  it("answers a meta nested 10 000 levels deep with 400, and 32 levels are fine", async () => {
    const f = await fixture();
    const depth = 10_000;
    const body = `{"apiId":"${f.apiId}","meta":{"a":${"[".repeat(depth)}${"]".repeat(depth)}}}`;
    const deep = await s.raw("/v2/keys.createKey", {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${s.rootKey}` },
      body,
    });
    expect(deep.status).toBe(400);
    expect(deep.body.error.errors[0].message).toBe("nests deeper than 32 levels");
    let meta: unknown = 1;
    for (let i = 0; i < 31; i++) meta = { a: meta };
    const created = await s.call("json", "keys.createKey", { apiId: f.apiId, meta });
    expect(created.status).toBe(200);
    // Readable back through a binary door.
    const read = await s.call("grpc", "keys.getKey", { keyId: created.data.keyId });
    expect(read.status).toBe(200);
    expect(read.data.meta).toEqual(meta);
    known = undefined;
  });

  it("keeps analytics flowing: a rate-limit identifier with U+0000 is refused, not buffered", async () => {
    const res = await s.call("json", "ratelimit.limit", {
      namespace: "fuzz.nul",
      identifier: "a\u0000",
      limit: 1,
      duration: 1000,
    });
    expect(res.status).toBe(400);
    await s.call("json", "ratelimit.limit", {
      namespace: "fuzz.nul",
      identifier: "ok",
      limit: 1,
      duration: 1000,
    });
    await s.app.deps.events.flush();
    expect(s.app.deps.events.stats()).toMatchObject({ buffered: 0 });
    known = undefined;
  });
});
