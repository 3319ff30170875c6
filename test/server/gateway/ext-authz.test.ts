import { create, fromBinary, type MessageInitShape, toBinary } from "@bufbuild/protobuf";
import { BinaryWriter } from "@bufbuild/protobuf/wire";
import * as grpc from "@grpc/grpc-js";
import { afterAll, describe, expect, it } from "vitest";
import {
  type AttributeContext,
  AttributeContextSchema,
} from "../../../gen/envoy/service/auth/v3/attribute_context_pb.js";
import {
  Authorization,
  CheckRequestSchema,
  type CheckResponse,
  CheckResponseSchema,
} from "../../../gen/envoy/service/auth/v3/external_auth_pb.js";
import { useServer } from "../../harness/server.js";
import { type Gateway, gatewayOf } from "./ask.js";

// Envoy's ext_authz over gRPC: envoy.service.auth.v3.Authorization/Check on the gRPC port,
// called here as Envoy calls it, by a grpc-js client of the messages generated from
// proto/envoy. The same authorization as the forward-auth endpoint (forward-auth.test.ts),
// answered as Envoy expects: OK with the upstream headers, or a denial carrying the HTTP answer.

const s = useServer();
const PATH = `/${Authorization.typeName}/${Authorization.method.check.name}`;

const Client = grpc.makeGenericClientConstructor(
  {
    check: {
      path: PATH,
      requestStream: false,
      responseStream: false,
      requestSerialize: (m: Uint8Array) => Buffer.from(m),
      requestDeserialize: (b: Buffer) => b,
      responseSerialize: (m: Uint8Array) => Buffer.from(m),
      responseDeserialize: (b: Buffer) => fromBinary(CheckResponseSchema, b),
    },
  },
  "Authorization",
);
let client: grpc.Client | undefined;
afterAll(() => client?.close());

/** Calls Check with these bytes (a CheckRequest, or anything) and the root key's metadata. */
function checkBytes(bytes: Uint8Array, rootKey: string | undefined): Promise<CheckResponse> {
  client ??= new Client(`127.0.0.1:${s.app.grpcPort}`, grpc.credentials.createInsecure());
  const metadata = new grpc.Metadata();
  if (rootKey !== undefined) metadata.set("authorization", `Bearer ${rootKey}`);
  return new Promise((resolve, reject) => {
    const call = (client as unknown as Record<string, (...a: unknown[]) => void>).check;
    call?.call(client, bytes, metadata, (err: Error | null, res: CheckResponse) =>
      err ? reject(err) : resolve(res),
    );
  });
}

type Init = MessageInitShape<typeof CheckRequestSchema>;

/** A CheckRequest for a request with these headers, from this source address. */
function requestOf(
  headers: Record<string, string>,
  opts: Partial<{
    source: string;
    extensions: Record<string, string>;
    method: string;
    path: string;
  }> = {},
): Init {
  return {
    attributes: {
      source: {
        address: {
          address: {
            case: "socketAddress",
            value: {
              address: opts.source ?? "203.0.113.9",
              portSpecifier: { case: "portValue", value: 40000 },
            },
          },
        },
      },
      request: {
        http: { method: opts.method ?? "GET", path: opts.path ?? "/orders/1?x=2", headers },
      },
      contextExtensions: opts.extensions ?? {},
    },
  };
}

async function check(
  g: Gateway,
  headers: Record<string, string>,
  opts: Parameters<typeof requestOf>[1] = {},
) {
  const req = requestOf({ "x-latchkey-api-id": g.apiId, ...headers }, opts);
  return checkBytes(toBinary(CheckRequestSchema, create(CheckRequestSchema, req)), g.rootKey);
}

const headersOf = (options: { header?: { key: string; value: string } }[]) =>
  Object.fromEntries(options.map((o) => [o.header?.key, o.header?.value]));

function denied(res: CheckResponse) {
  if (res.httpResponse.case !== "deniedResponse")
    throw new Error(`not denied: ${res.httpResponse.case}`);
  const d = res.httpResponse.value;
  return {
    grpc: res.status?.code,
    http: d.status?.code,
    headers: headersOf(d.headers),
    body: JSON.parse(d.body),
  };
}

describe("Authorization/Check", () => {
  it("lets a valid key through: status OK, the upstream headers, the client's, and what to strip", async () => {
    const g = await gatewayOf(s);
    const k = await s.seed.key({
      apiId: g.apiId,
      externalId: "envoy_user",
      ratelimits: [{ name: "requests", limit: 10, duration: 60_000, autoApply: true }],
    });
    const res = await check(g, { authorization: `Bearer ${k.key}` });
    expect(res.status?.code).toBe(grpc.status.OK);
    if (res.httpResponse.case !== "okResponse") throw new Error("not ok");
    const ok = res.httpResponse.value;
    expect(headersOf(ok.headers)).toEqual({
      "x-latchkey-key-id": k.keyId,
      "x-latchkey-identity": "envoy_user",
    });
    expect(ok.headersToRemove).toEqual(["x-latchkey-meta", "x-latchkey-meta-omitted"]);
    const client = headersOf(ok.responseHeadersToAdd);
    expect(client).toMatchObject({
      "x-latchkey-code": "VALID",
      "ratelimit-policy": '"requests";q=10;w=60',
    });
    expect(client.ratelimit).toMatch(/^"requests";r=9;t=\d+$/);
  });

  it("denies without a key: 401 in denied_response, UNAUTHENTICATED, WWW-Authenticate and the JSON body", async () => {
    const g = await gatewayOf(s);
    const d = denied(await check(g, {}));
    expect([d.grpc, d.http]).toEqual([grpc.status.UNAUTHENTICATED, 401]);
    expect(d.headers).toMatchObject({
      "www-authenticate": 'Bearer realm="latchkey"',
      "content-type": "application/json",
      "x-latchkey-code": "KEY_MISSING",
    });
    expect(d.body.error).toMatchObject({ status: 401, code: "KEY_MISSING" });
  });

  it("maps each refusal to its HTTP status and a gRPC code", async () => {
    const g = await gatewayOf(s);
    const limited = await s.seed.key({ apiId: g.apiId });
    const h = {
      authorization: `Bearer ${limited.key}`,
      "x-latchkey-ratelimits": "burst;limit=1;duration=60000",
    };
    await check(g, h);
    const rl = denied(await check(g, h));
    expect([rl.grpc, rl.http, rl.body.error.code]).toEqual([
      grpc.status.RESOURCE_EXHAUSTED,
      429,
      "RATE_LIMITED",
    ]);
    expect(Number(rl.headers["retry-after"])).toBeGreaterThan(0);
    const perms = denied(
      await check(g, { authorization: `Bearer ${limited.key}`, "x-latchkey-permissions": "admin" }),
    );
    expect([perms.grpc, perms.http]).toEqual([grpc.status.PERMISSION_DENIED, 403]);
    const bad = denied(
      await check(g, { authorization: `Bearer ${limited.key}`, "x-latchkey-cost": "lots" }),
    );
    expect([bad.grpc, bad.http, bad.body.error.errors[0].location]).toEqual([
      grpc.status.INVALID_ARGUMENT,
      400,
      "X-Latchkey-Cost",
    ]);
  });

  it("checks network rules against Envoy's source address", async () => {
    const g = await gatewayOf(s);
    const k = await s.seed.key({ apiId: g.apiId, allowedCidrs: ["203.0.113.0/24"] });
    const auth = { authorization: `Bearer ${k.key}` };
    expect((await check(g, auth, { source: "203.0.113.50" })).status?.code).toBe(grpc.status.OK);
    const outside = denied(await check(g, auth, { source: "198.51.100.1" }));
    expect([outside.http, outside.body.error.code]).toEqual([403, "FORBIDDEN"]);
    // An X-Forwarded-For the client wrote changes nothing: Envoy's source address decides.
    const spoofed = await check(
      g,
      { ...auth, "x-forwarded-for": "203.0.113.50" },
      { source: "198.51.100.1" },
    );
    expect(denied(spoofed).http).toBe(403);
  });

  it("reads the policy from the route's context extensions before the request's headers", async () => {
    const g = await gatewayOf(s);
    const k = await s.seed.key({ apiId: g.apiId, credits: { remaining: 10 } });
    const res = await check(
      { ...g },
      // A client sending its own cost header gets the route's cost all the same.
      { authorization: `Bearer ${k.key}`, "x-latchkey-cost": "0" },
      { extensions: { "x-latchkey-cost": "4", "x-latchkey-api-id": g.apiId } },
    );
    expect(res.status?.code).toBe(grpc.status.OK);
    expect((await s.api.keys.getKey({ keyId: k.keyId })).data?.credits?.remaining).toBe(6n);
  });

  it("reads headers sent as a list (Envoy's encode_raw_headers)", async () => {
    const g = await gatewayOf(s);
    const k = await s.seed.key({ apiId: g.apiId });
    const req = create(CheckRequestSchema, requestOf({}));
    const http = req.attributes?.request?.http;
    if (!http) throw new Error("no http");
    http.headerMap = {
      $typeName: "envoy.config.core.v3.HeaderMap",
      headers: [
        {
          $typeName: "envoy.config.core.v3.HeaderValue",
          key: "x-latchkey-api-id",
          value: "",
          rawValue: Buffer.from(g.apiId),
        },
        {
          $typeName: "envoy.config.core.v3.HeaderValue",
          key: "X-API-Key",
          value: "",
          rawValue: Buffer.from(k.key),
        },
      ],
    };
    const res = await checkBytes(toBinary(CheckRequestSchema, req), g.rootKey);
    expect(res.status?.code).toBe(grpc.status.OK);
  });

  it("needs the root key as authorization metadata, holding verify_key for the API", async () => {
    const g = await gatewayOf(s);
    const k = await s.seed.key({ apiId: g.apiId });
    const none = denied(
      await check({ ...g, rootKey: undefined }, { authorization: `Bearer ${k.key}` }),
    );
    expect([none.grpc, none.http]).toEqual([grpc.status.UNAUTHENTICATED, 401]);
    expect(none.body.error.detail).toContain("gRPC metadata 'authorization: Bearer <ROOT_KEY>'");
    const narrow = await s.seed.rootKey([`api.${await s.seed.api()}.verify_key`]);
    const wrong = denied(
      await check({ ...g, rootKey: narrow }, { authorization: `Bearer ${k.key}` }),
    );
    expect([wrong.grpc, wrong.http, wrong.body.error.detail]).toEqual([
      grpc.status.PERMISSION_DENIED,
      403,
      `Missing permission: 'api.${g.apiId}.verify_key'.`,
    ]);
  });

  it("skips the fields of Envoy's CheckRequest it does not declare", async () => {
    const g = await gatewayOf(s);
    const k = await s.seed.key({ apiId: g.apiId });
    const known = toBinary(
      CheckRequestSchema,
      create(CheckRequestSchema, requestOf({ "x-latchkey-api-id": g.apiId, "x-api-key": k.key })),
    );
    // Envoy's AttributeContext.destination (2) and metadata_context (11), inside CheckRequest.attributes (1).
    const attributes = fromBinary(CheckRequestSchema, known).attributes;
    const w = new BinaryWriter();
    w.tag(1, 2).fork();
    w.raw(toBinary(AttributeContextSchema, attributes as AttributeContext));
    w.tag(2, 2).bytes(new Uint8Array([10, 4, 10, 2, 16, 1]));
    w.tag(11, 2).bytes(new Uint8Array([]));
    w.join();
    const res = await checkBytes(w.finish(), g.rootKey);
    expect(res.status?.code).toBe(grpc.status.OK);
  });

  it("refuses bytes that are no CheckRequest with INVALID_ARGUMENT", async () => {
    const g = await gatewayOf(s);
    const err = await checkBytes(new Uint8Array([0xff, 0xff, 0xff]), g.rootKey).catch(
      (e: grpc.ServiceError) => e,
    );
    expect((err as grpc.ServiceError).code).toBe(grpc.status.INVALID_ARGUMENT);
  });

  it("is served on the gRPC port only, not on the main port's Connect door", async () => {
    const res = await fetch(`${s.url}${PATH}`, {
      method: "POST",
      headers: { "content-type": "application/grpc+proto" },
      body: new Uint8Array([0, 0, 0, 0, 0]),
    });
    expect(res.status).toBe(404);
  });
});
