import type { DescMethod, DescService } from "@bufbuild/protobuf";
import { Code, ConnectError, createClient, type Transport } from "@connectrpc/connect";
import {
  createConnectTransport,
  createGrpcTransport,
  createGrpcWebTransport,
} from "@connectrpc/connect-node";
import { AnalyticsService } from "../../gen/latchkey/v2/analytics_pb.js";
import { ApisService } from "../../gen/latchkey/v2/apis_pb.js";
import { ErrorDetailSchema } from "../../gen/latchkey/v2/common_pb.js";
import { IdentitiesService } from "../../gen/latchkey/v2/identities_pb.js";
import { KeysService } from "../../gen/latchkey/v2/keys_pb.js";
import { LivenessService } from "../../gen/latchkey/v2/liveness_pb.js";
import { PermissionsService } from "../../gen/latchkey/v2/permissions_pb.js";
import { RatelimitService } from "../../gen/latchkey/v2/ratelimit_pb.js";
import { WebhooksService } from "../../gen/latchkey/v2/webhooks_pb.js";
import type { Violation } from "../../src/errors/service-error.js";
import { decodeObject, encodeMessage } from "../../src/server/json-codec.js";
import { namespaceOf } from "../../src/services/procedures.js";
import { assertDocumentedRequest, assertDocumentedResponse } from "./openapi.js";

/**
 * The ways in: the /v2 JSON door, Connect JSON over HTTP/1.1, gRPC on the gRPC port
 * (GRPC_PORT), gRPC through Connect on the main port, and gRPC-web.
 */
export type TestDoor = "json" | "connect" | "grpc" | "grpc-main" | "grpc-web";

/** The three doors every procedure is tested through. */
export const DOORS: readonly TestDoor[] = ["json", "connect", "grpc"];

/** Every service of the contract. */
export const SERVICES: readonly DescService[] = [
  LivenessService,
  ApisService,
  KeysService,
  IdentitiesService,
  PermissionsService,
  RatelimitService,
  AnalyticsService,
  WebhooksService,
];

/** A call's outcome in one shape for every door: the /v2 JSON form of the response. */
export interface CallResult {
  /** HTTP status on the /v2 door; for Connect and gRPC, the status of the error detail (200 on success). */
  status: number;
  requestId: string;
  // biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary response shapes
  data?: any;
  pagination?: { cursor?: string; hasMore: boolean };
  error?: {
    /** `err:svc:<category>:<name>`. */
    code: string;
    detail: string;
    title: string;
    type: string;
    errors?: Violation[];
    /** On the Connect and gRPC doors, the name of the call's Connect code (`NotFound`). */
    connectCode?: string;
  };
}

const methods = new Map<string, DescMethod>();
for (const s of SERVICES)
  for (const m of s.methods) methods.set(`${namespaceOf(s)}.${m.localName}`, m);

/** The method of a procedure name such as `apis.createApi`. */
export function methodOf(procedure: string): DescMethod {
  const m = methods.get(procedure);
  if (!m) throw new Error(`unknown procedure ${procedure}`);
  return m;
}

/** The catalog code encoded in an error `type` URL. */
export function codeFromType(type: string): string {
  const m = /\/errors-v2\/svc\/([a-z_]+)\/([a-z_]+)$/.exec(type);
  return m ? `err:svc:${m[1]}:${m[2]}` : "";
}

/** Transports to one server, created once per server. */
export function createTransports(
  baseUrl: string,
  grpcUrl: string,
): Record<Exclude<TestDoor, "json">, Transport> {
  return {
    connect: createConnectTransport({ baseUrl, httpVersion: "1.1" }),
    grpc: createGrpcTransport({ baseUrl: grpcUrl }),
    "grpc-main": createGrpcTransport({ baseUrl }),
    "grpc-web": createGrpcWebTransport({ baseUrl, httpVersion: "1.1" }),
  };
}

/**
 * Calls a procedure through the /v2 door with a JSON body. Every answer (status and body,
 * success or error) must be one the OpenAPI document allows, and so must every request
 * body the door accepted, or the calling test fails.
 */
export async function callJson(
  baseUrl: string,
  procedure: string,
  body: unknown,
  headers: Record<string, string>,
): Promise<CallResult> {
  const res = await fetch(`${baseUrl}/v2/${procedure}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  });
  // biome-ignore lint/suspicious/noExplicitAny: decoded JSON
  const json = (await res.json()) as any;
  if (res.headers.get("x-request-id") !== json.meta?.requestId) {
    throw new Error("x-request-id header and meta.requestId differ");
  }
  assertDocumentedResponse(procedure, res.status, json);
  if (res.status === 200) assertDocumentedRequest(procedure, body);
  const out: CallResult = { status: res.status, requestId: json.meta.requestId };
  if ("data" in json) out.data = json.data;
  if (json.pagination) out.pagination = json.pagination;
  if (json.error) out.error = { ...json.error, code: codeFromType(json.error.type) };
  return out;
}

/** Calls a procedure through a Connect client (Connect, gRPC or gRPC-web). */
export async function callConnect(
  transport: Transport,
  procedure: string,
  body: unknown,
  headers: Record<string, string>,
): Promise<CallResult> {
  const method = methodOf(procedure);
  const violations: Violation[] = [];
  const input = decodeObject(method.input, body, "", violations);
  if (violations.length > 0) {
    throw new Error(`test body is not valid for ${procedure}: ${JSON.stringify(violations)}`);
  }
  // biome-ignore lint/suspicious/noExplicitAny: generic client over any service
  const client = createClient(method.parent, transport) as any;
  try {
    let header: Headers | undefined;
    const res = await client[method.localName](input, {
      headers,
      onHeader: (h: Headers) => (header = h),
    });
    const json = encodeMessage(method.output, res);
    const requestId = (json.meta as { requestId: string } | undefined)?.requestId ?? "";
    if (header && header.get("x-request-id") !== requestId) {
      throw new Error("x-request-id header and meta.requestId differ");
    }
    const out: CallResult = { status: 200, requestId };
    if ("data" in json) out.data = json.data;
    if (json.pagination) out.pagination = json.pagination as CallResult["pagination"];
    return out;
  } catch (err) {
    const e = ConnectError.from(err);
    const detail = e.findDetails(ErrorDetailSchema)[0];
    if (!detail) {
      return {
        status: e.code === Code.ResourceExhausted ? 413 : -1,
        requestId: "",
        error: { code: `connect:${Code[e.code]}`, detail: e.rawMessage, title: "", type: "" },
      };
    }
    return {
      status: detail.status,
      requestId: detail.requestId,
      error: {
        code: detail.code,
        detail: detail.detail,
        title: detail.title,
        type: detail.type,
        errors: detail.errors.map((v) => ({ location: v.location, message: v.message })),
        connectCode: Code[e.code],
      },
    };
  }
}
