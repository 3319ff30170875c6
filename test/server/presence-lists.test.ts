import { gzipSync } from "node:zlib";
import { fromBinary } from "@bufbuild/protobuf";
import { base64Decode } from "@bufbuild/protobuf/wire";
import type { Transport } from "@connectrpc/connect";
import {
  compressionGzip,
  createConnectTransport,
  createGrpcTransport,
  createGrpcWebTransport,
} from "@connectrpc/connect-node";
import { describe, expect, it } from "vitest";
import { ErrorDetailSchema } from "../../gen/latchkey/v2/common_pb.js";
import { callConnect } from "../harness/doors.js";
import { useServer } from "../harness/server.js";

// keys.setPermissions, keys.setRoles and permissions.setRolePermissions replace a whole list.
// An omitted list must never be read as [] (which removes every grant): a JSON body must name
// the list, [] to remove all, on the /v2 door and on Connect, gRPC and gRPC-web with the JSON
// codec. Binary protobuf cannot tell an omitted list from an empty one: there it is [].

const s = useServer();
let n = 0;

interface Target {
  /** The body without the list. */
  body: Record<string, string>;
  /** The grants the target holds now. */
  held(): Promise<string[]>;
}

interface Case {
  procedure: string;
  /** The Connect path of the procedure. */
  path: string;
  field: "permissions" | "roles";
  make(): Promise<Target>;
}

const keyHolding = async (grant: Record<string, string[]>, field: "permissions" | "roles") => {
  const { keyId } = await s.seed.key(grant);
  return {
    body: { keyId },
    held: async () => (await s.api.keys.getKey({ keyId })).data?.[field] ?? [],
  };
};

const CASES: Case[] = [
  {
    procedure: "keys.setPermissions",
    path: "latchkey.v2.KeysService/SetPermissions",
    field: "permissions",
    make: () => keyHolding({ permissions: [`presence${++n}.read`] }, "permissions"),
  },
  {
    procedure: "keys.setRoles",
    path: "latchkey.v2.KeysService/SetRoles",
    field: "roles",
    async make() {
      const role = `presence_role_${++n}`;
      await s.api.permissions.createRole({ name: role });
      return keyHolding({ roles: [role] }, "roles");
    },
  },
  {
    procedure: "permissions.setRolePermissions",
    path: "latchkey.v2.PermissionsService/SetRolePermissions",
    field: "permissions",
    async make() {
      const role = await s.api.permissions.createRole({
        name: `presence_role_${++n}`,
        permissions: [`presence${n}.read`],
      });
      const roleId = role.data?.roleId as string;
      return {
        body: { roleId },
        held: async () =>
          ((await s.api.permissions.getRole({ role: roleId })).data?.permissions ?? []).map(
            (p) => p.slug,
          ),
      };
    },
  },
];

const REQUIRED = "is required: give [] for none";
const auth = () => ({ authorization: `Bearer ${s.rootKey}` });

/** Protobuf JSON clients with their default writer, which leaves an empty list out. */
const jsonClients: [string, (url: string) => Transport][] = [
  [
    "Connect JSON",
    (baseUrl) => createConnectTransport({ baseUrl, httpVersion: "1.1", useBinaryFormat: false }),
  ],
  [
    "Connect JSON, gzip",
    (baseUrl) =>
      createConnectTransport({
        baseUrl,
        httpVersion: "1.1",
        useBinaryFormat: false,
        sendCompression: compressionGzip,
        compressMinBytes: 0,
      }),
  ],
  ["gRPC JSON", (baseUrl) => createGrpcTransport({ baseUrl, useBinaryFormat: false })],
  [
    "gRPC-web JSON",
    (baseUrl) => createGrpcWebTransport({ baseUrl, httpVersion: "1.1", useBinaryFormat: false }),
  ],
];

/** A Connect JSON call with a body written by hand; the status and the ErrorDetail if any. */
async function rawConnect(path: string, body: unknown) {
  const res = await fetch(`${s.url}/${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...auth() },
    body: JSON.stringify(body),
  });
  const json = (await res.json()) as { code?: string; details?: { value: string }[] };
  const value = json.details?.[0]?.value;
  const detail = value ? fromBinary(ErrorDetailSchema, base64Decode(value)) : undefined;
  return { status: res.status, code: json.code, detail };
}

describe.each(CASES)("$procedure", (c) => {
  it("an omitted list is a 400 naming it on the /v2 door, and nothing is removed", async () => {
    const t = await c.make();
    const before = await t.held();
    const res = await s.call("json", c.procedure, t.body);
    expect(res.status).toBe(400);
    expect(res.error?.code).toBe("err:svc:application:invalid_input");
    expect(res.error?.errors).toEqual([{ location: `/${c.field}`, message: REQUIRED }]);
    expect(await t.held()).toEqual(before);
    expect(before).toHaveLength(1);
  });

  it("null is a 400 on the /v2 door and on Connect JSON, and nothing is removed", async () => {
    const t = await c.make();
    const before = await t.held();
    const v2 = await s.call("json", c.procedure, { ...t.body, [c.field]: null });
    expect(v2.status).toBe(400);
    expect(v2.error?.errors).toEqual([{ location: `/${c.field}`, message: "must not be null" }]);
    const connect = await rawConnect(c.path, { ...t.body, [c.field]: null });
    expect(connect.status).toBe(400);
    expect(connect.code).toBe("invalid_argument");
    expect(connect.detail?.errors.map((e) => [e.location, e.message])).toEqual([
      [`/${c.field}`, REQUIRED],
    ]);
    expect(await t.held()).toEqual(before);
  });

  it.each(jsonClients)("an omitted list is INVALID_ARGUMENT naming it via %s", async (_, make) => {
    const t = await c.make();
    const before = await t.held();
    const res = await callConnect(make(s.url), c.procedure, t.body, auth());
    expect(res.status).toBe(400);
    expect(res.error?.code).toBe("err:svc:application:invalid_input");
    expect(res.error?.errors).toEqual([{ location: `/${c.field}`, message: REQUIRED }]);
    expect(await t.held()).toEqual(before);
  });

  it("an explicit [] removes every item on the /v2 door and on Connect and gRPC JSON", async () => {
    // A protobuf-es client writes empty lists when told to.
    const emitting = (t: Transport) => (target: Target) =>
      callConnect(t, c.procedure, { ...target.body, [c.field]: [] }, auth()).then((r) => r.status);
    const jsonOptions = { alwaysEmitImplicit: true };
    for (const send of [
      async (t: Target) => (await s.call("json", c.procedure, { ...t.body, [c.field]: [] })).status,
      async (t: Target) => (await rawConnect(c.path, { ...t.body, [c.field]: [] })).status,
      emitting(
        createConnectTransport({
          baseUrl: s.url,
          httpVersion: "1.1",
          useBinaryFormat: false,
          jsonOptions,
        }),
      ),
      emitting(createGrpcTransport({ baseUrl: s.url, useBinaryFormat: false, jsonOptions })),
    ]) {
      const t = await c.make();
      expect(await t.held()).toHaveLength(1);
      expect(await send(t)).toBe(200);
      expect(await t.held()).toEqual([]);
    }
  });

  it("over binary protobuf an omitted list cannot be told from [] and removes every item", async () => {
    const binary = [
      (t: Target) => s.call("grpc", c.procedure, t.body),
      (t: Target) => s.call("grpc-web", c.procedure, t.body),
      (t: Target) =>
        callConnect(
          createConnectTransport({ baseUrl: s.url, httpVersion: "1.1", useBinaryFormat: true }),
          c.procedure,
          t.body,
          auth(),
        ),
    ];
    for (const send of binary) {
      const t = await c.make();
      expect(await t.held()).toHaveLength(1);
      expect((await send(t)).status).toBe(200);
      expect(await t.held()).toEqual([]);
    }
  });
});

describe("reading a Connect JSON body's keys", () => {
  const path = "latchkey.v2.KeysService/SetPermissions";
  const post = (body: RequestInit["body"], headers: Record<string, string> = {}) =>
    fetch(`${s.url}/${path}`, {
      method: "POST",
      headers: { "content-type": "application/json", ...auth(), ...headers },
      body,
      duplex: "half",
    } as RequestInit).then(async (res) => ({
      status: res.status,
      code: ((await res.json()) as { code?: string }).code,
    }));

  it("leaves the door's own answers to bodies it cannot read unchanged", async () => {
    const big = new Uint8Array(1024 * 1024 + 100).fill(0x61);
    const chunked = new ReadableStream({
      start(controller) {
        controller.enqueue(big);
        controller.close();
      },
    });
    expect(await post(chunked)).toEqual({ status: 413, code: "resource_exhausted" });
    expect(await post("{not json")).toMatchObject({ status: 400, code: "invalid_argument" });
    const cut = gzipSync(JSON.stringify({ keyId: "key_x", permissions: [] })).subarray(0, 12);
    expect(await post(cut, { "content-encoding": "gzip" })).toMatchObject({
      status: 400,
      code: "invalid_argument",
    });
    expect(await post("{}", { "content-encoding": "zstd" })).toMatchObject({
      status: 415,
      code: "unimplemented",
    });
  });

  it("reads a gzip body's keys: an explicit [] is given", async () => {
    const k = await s.seed.key({ permissions: [`presence${++n}.read`] });
    const body = gzipSync(JSON.stringify({ keyId: k.keyId, permissions: [] }));
    expect(await post(body, { "content-encoding": "gzip" })).toEqual({
      status: 200,
      code: undefined,
    });
    expect((await s.api.keys.getKey({ keyId: k.keyId })).data?.permissions).toEqual([]);
  });
});
