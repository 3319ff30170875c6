import { gzipSync } from "node:zlib";
import { create, type JsonObject, toBinary } from "@bufbuild/protobuf";
import { afterAll, describe, expect, it } from "vitest";
import { CreateApiRequestSchema } from "../../gen/latchkey/v2/apis_pb.js";
import { CreateKeyRequestSchema } from "../../gen/latchkey/v2/keys_pb.js";
import { MAX_VIOLATIONS } from "../../src/domain/field-rules.js";
import {
  closeSessions,
  connectProto,
  envelope,
  grpc,
  grpcWeb,
  type RawAnswer,
} from "../fuzz/raw-doors.js";
import { useServer } from "../harness/server.js";

const s = useServer();
afterAll(() => closeSessions());

const auth = () => ({ authorization: `Bearer ${s.rootKey}` });

describe("a request that breaks a bound in every item of a long list", () => {
  it("is answered on /v2 with at most a few dozen violations, smaller than the request", async () => {
    const { keyId } = await s.seed.key();
    const body = JSON.stringify({ keyId, permissions: new Array(10_000).fill(1) });
    const res = await fetch(`${s.url}/v2/keys.setPermissions`, {
      method: "POST",
      headers: { "content-type": "application/json", ...auth() },
      body,
    });
    const text = await res.text();
    expect(res.status).toBe(400);
    const json = JSON.parse(text);
    expect(json.error.errors).toHaveLength(MAX_VIOLATIONS);
    expect(json.error.errors[0]).toEqual({
      location: "/permissions/0",
      message: "must be a string",
    });
    expect(json.error.detail).toContain(`only the first ${MAX_VIOLATIONS} problems are listed`);
    expect(text.length).toBeLessThan(body.length / 4);
  });

  it("stops at the cap on bounds too: 1000 names too short, 50 duplicate limit names", async () => {
    const { keyId } = await s.seed.key();
    const short = await s.call("json", "keys.setPermissions", {
      keyId,
      permissions: new Array(1000).fill("a"),
    });
    expect(short.status).toBe(400);
    expect(short.error?.errors).toHaveLength(MAX_VIOLATIONS);
    const ratelimits = new Array(50).fill({ name: "same", limit: 1, duration: 1000 });
    const dup = await s.call("json", "identities.createIdentity", {
      externalId: "dup",
      ratelimits,
    });
    expect(dup.status).toBe(400);
    expect(dup.error?.errors).toHaveLength(MAX_VIOLATIONS);
  });

  it.each(["connect", "grpc", "grpc-main", "grpc-web"] as const)(
    "is answered through %s with at most a few dozen violations",
    async (door) => {
      const { keyId } = await s.seed.key();
      const res = await s.call(door, "keys.setPermissions", {
        keyId,
        permissions: new Array(1000).fill("a"),
      });
      expect(res.status).toBe(400);
      expect(res.error?.errors).toHaveLength(MAX_VIOLATIONS);
      expect(res.error?.detail).toContain(`only the first ${MAX_VIOLATIONS} problems are listed`);
    },
  );

  it("still lists every violation when there are only a few", async () => {
    const res = await s.call("json", "apis.createApi", { name: "", extra: 1 });
    expect(res.status).toBe(400);
    expect(res.error?.errors).toHaveLength(1);
    expect(res.error?.detail).not.toContain("only the first");
  });
});

// A length-delimited field 1 that claims 127 bytes and carries 1: it cannot be decoded.
const TRUNCATED = new Uint8Array([0x0a, 0x7f, 0x61]);
const PATH = "/latchkey.v2.ApisService/CreateApi";

/** A createKey whose meta nests deeper than the protobuf decoder's recursion limit. */
function tooDeep(): Uint8Array {
  let meta: JsonObject = { a: 1 };
  for (let i = 0; i < 60; i++) meta = { a: meta };
  const request = create(CreateKeyRequestSchema, {
    apiId: "api_x",
    meta,
  });
  return toBinary(CreateKeyRequestSchema, request);
}
const DEEP_PATH = "/latchkey.v2.KeysService/CreateKey";

describe("binary bodies that are not a protobuf message", () => {
  it("Connect (application/proto) answers 400 invalid_argument in the Connect error form", async () => {
    const res = await connectProto(s.url, PATH, TRUNCATED, auth());
    expect(res).toMatchObject({ status: 400, code: "invalid_argument" });
    expect(res.message).toMatch(/not a valid protobuf message/);
  });

  it("Connect checks the root key first: without one the same body is 401", async () => {
    const res = await connectProto(s.url, PATH, TRUNCATED);
    expect(res).toMatchObject({ status: 401, code: "unauthenticated" });
  });

  it("Connect answers a message nested beyond the decoder's limit with 400 too", async () => {
    const res = await connectProto(s.url, DEEP_PATH, tooDeep(), auth());
    expect(res).toMatchObject({ status: 400, code: "invalid_argument" });
  });

  it.each<[string, (path: string, body: Uint8Array) => Promise<RawAnswer>]>([
    ["gRPC-web", (p, b) => grpcWeb(s.url, p, envelope(b), auth())],
    ["gRPC on the main port", (p, b) => grpc(s.url, p, envelope(b), auth())],
    [
      "gRPC on the gRPC port",
      (p, b) => grpc(`http://127.0.0.1:${s.app.grpcPort}`, p, envelope(b), auth()),
    ],
  ])("%s answers INVALID_ARGUMENT", async (_, call) => {
    for (const [path, body] of [
      [PATH, TRUNCATED],
      [DEEP_PATH, tooDeep()],
    ] as const) {
      const res = await call(path, body);
      expect(res.code, res.message).toBe("3");
    }
  });

  it("a body flagged compressed without an encoding is INVALID_ARGUMENT on gRPC and gRPC-web", async () => {
    const flagged = envelope(new Uint8Array([0x0a, 0x01, 0x61]), 1);
    expect((await grpc(s.url, PATH, flagged, auth())).code).toBe("3");
    expect((await grpcWeb(s.url, PATH, flagged, auth())).code).toBe("3");
  });

  it("a Connect body that does not gunzip is 400, and an unknown encoding is 415", async () => {
    const valid = toBinary(CreateApiRequestSchema, create(CreateApiRequestSchema, { name: "zip" }));
    const cut = gzipSync(valid).subarray(0, 12);
    const bad = await connectProto(s.url, PATH, cut, { ...auth(), "content-encoding": "gzip" });
    expect(bad).toMatchObject({ status: 400, code: "invalid_argument" });
    const unknown = await connectProto(s.url, PATH, valid, {
      ...auth(),
      "content-encoding": "zstd",
    });
    expect(unknown).toMatchObject({ status: 415, code: "unimplemented" });
  });

  it("a Connect body over 1 MiB without a Content-Length is 413, not 429", async () => {
    const big = new Uint8Array(1024 * 1024 + 100).fill(0x61);
    const chunked = new ReadableStream({
      start(controller) {
        controller.enqueue(big);
        controller.close();
      },
    });
    const res = await fetch(`${s.url}${PATH}`, {
      method: "POST",
      headers: { "content-type": "application/proto", ...auth() },
      body: chunked,
      duplex: "half",
    } as RequestInit);
    expect(res.status).toBe(413);
    expect(((await res.json()) as { code: string }).code).toBe("resource_exhausted");
  });

  it("a valid binary body still works on every binary door", async () => {
    const body = toBinary(CreateApiRequestSchema, create(CreateApiRequestSchema, { name: "bin" }));
    expect((await connectProto(s.url, PATH, body, auth())).status).toBe(200);
    expect((await grpcWeb(s.url, PATH, envelope(body), auth())).code).toBe("0");
    expect((await grpc(s.url, PATH, envelope(body), auth())).code).toBe("0");
  });
});

describe("prototype property names", () => {
  const names = ["constructor", "__proto__", "toString", "hasOwnProperty", "valueOf"];

  it.each(names)("GET /docs/assets/%s is 404", async (name) => {
    const res = await fetch(`${s.url}/docs/assets/${name}`);
    expect(res.status).toBe(404);
  });

  it.each(names)("%s as a procedure or namespace is a 404, not a 500", async (name) => {
    for (const path of [`/v2/${name}`, `/v2/keys.${name}`, `/v2/${name}.createKey`]) {
      const res = await s.raw(path, {
        method: "POST",
        headers: { "content-type": "application/json", ...auth() },
        body: "{}",
      });
      expect(res.status, path).toBe(404);
    }
    for (const path of [`/latchkey.v2.KeysService/${name}`, `/latchkey.v2.${name}/CreateKey`]) {
      const res = await connectProto(s.url, path, new Uint8Array(0), auth());
      expect(res.status, path).toBe(404);
    }
  });

  it.each(names)("%s as a JSON key is an unknown field, on /v2 and Connect", async (name) => {
    const body = `{"name":"x","${name}":{"a":1}}`;
    const json = await s.raw("/v2/apis.createApi", {
      method: "POST",
      headers: { "content-type": "application/json", ...auth() },
      body,
    });
    expect(json.status).toBe(400);
    expect(json.body.error.errors[0]).toEqual({ location: `/${name}`, message: "unknown field" });
    const connect = await fetch(`${s.url}${PATH}`, {
      method: "POST",
      headers: { "content-type": "application/json", ...auth() },
      body,
    });
    expect(connect.status).toBe(400);
  });

  it("as header names they are ordinary headers", async () => {
    const res = await s.raw("/v2/apis.createApi", {
      method: "POST",
      headers: {
        "content-type": "application/json",
        ...auth(),
        constructor: "x",
        __proto__: "y",
        tostring: "z",
      } as Record<string, string>,
      body: JSON.stringify({ name: "headers" }),
    });
    expect(res.status).toBe(200);
  });
});
