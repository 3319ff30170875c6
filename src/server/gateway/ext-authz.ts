import type { IncomingHttpHeaders } from "node:http2";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import {
  type CheckRequest,
  CheckRequestSchema,
  type CheckResponse,
  CheckResponseSchema,
} from "../../../gen/envoy/service/auth/v3/external_auth_pb.js";
import { POLICY_HEADERS } from "../../domain/gateway-policy.js";
import { parseIp } from "../../domain/networks.js";
import { type GrpcRoute, plainUnary } from "../grpc-routes.js";
import { statusTrailers } from "../grpc-wire.js";
import type { GatewayAnswer } from "./answer.js";
import type { GatewayRequest } from "./exchange.js";

/** The gRPC status of each HTTP status a refusal can have (google.rpc.Code numbers). */
const GRPC_CODES: Record<number, number> = {
  400: Code.InvalidArgument,
  401: Code.Unauthenticated,
  403: Code.PermissionDenied,
  412: Code.FailedPrecondition,
  429: Code.ResourceExhausted,
  503: Code.Unavailable,
};

/** The policy headers, read from the route's context extensions before the request's headers. */
const POLICY_NAMES = new Set(Object.values(POLICY_HEADERS).map((h) => h.toLowerCase()));

/** The request's headers by lowercase name, from the map or (encode_raw_headers) the list. */
function headersOf(req: CheckRequest): Map<string, string> {
  const http = req.attributes?.request?.http;
  const out = new Map<string, string>();
  if (!http) return out;
  for (const [name, value] of Object.entries(http.headers)) out.set(name.toLowerCase(), value);
  for (const h of http.headerMap?.headers ?? []) {
    const name = h.key.toLowerCase();
    const value = h.value !== "" ? h.value : Buffer.from(h.rawValue).toString("utf8");
    const before = out.get(name);
    out.set(name, before === undefined ? value : `${before}, ${value}`);
  }
  return out;
}

/** What the door hands the shared authorization. */
function gatewayRequest(req: CheckRequest, metadata: IncomingHttpHeaders): GatewayRequest {
  const headers = headersOf(req);
  const extensions = req.attributes?.contextExtensions ?? {};
  const authorization = metadata.authorization;
  const address = req.attributes?.source?.address?.address;
  const peer = address?.case === "socketAddress" ? address.value.address : undefined;
  const http = req.attributes?.request?.http;
  return {
    door: "ext-authz",
    authorization:
      typeof authorization === "string" && authorization !== "" ? authorization : undefined,
    rootKeyHow:
      "Envoy must send it as gRPC metadata 'authorization: Bearer <ROOT_KEY>' (initial_metadata of the grpc_service)",
    header: (name) =>
      POLICY_NAMES.has(name) ? (extensions[name] ?? headers.get(name)) : headers.get(name),
    // Envoy's source address already accounts for its own trusted hops (xff_num_trusted_hops).
    clientIp: peer !== undefined && parseIp(peer) !== undefined ? peer : undefined,
    method: http?.method ?? "",
    path: http?.path ?? "",
  };
}

const asOptions = (headers: Record<string, string>) =>
  Object.entries(headers).map(([key, value]) => ({ header: { key, value } }));

/** The answer as Envoy expects it: OK with header changes, or a denial carrying the HTTP answer. */
function checkResponse(answer: GatewayAnswer): CheckResponse {
  if (answer.status === 200) {
    return create(CheckResponseSchema, {
      status: { code: 0 },
      httpResponse: {
        case: "okResponse",
        value: {
          headers: asOptions(answer.upstream),
          headersToRemove: answer.absent,
          responseHeadersToAdd: asOptions(answer.client),
        },
      },
    });
  }
  const headers = { ...answer.client, "content-type": "application/json" };
  return create(CheckResponseSchema, {
    status: { code: GRPC_CODES[answer.status] ?? Code.Internal },
    httpResponse: {
      case: "deniedResponse",
      value: { status: { code: answer.status }, headers: asOptions(headers), body: answer.body },
    },
  });
}

/**
 * Envoy's ext_authz `envoy.service.auth.v3.Authorization/Check` as a route of the gRPC port:
 * the CheckRequest's HTTP request authorized by `authorize` (the same authorization as the
 * forward-auth endpoint), answered as an OkHttpResponse or a DeniedHttpResponse. The root key
 * comes from the call's own metadata (Envoy's grpc_service initial_metadata).
 */
export function extAuthzRoute(authorize: (r: GatewayRequest) => Promise<GatewayAnswer>): GrpcRoute {
  return plainUnary(async (bytes, header) => {
    let req: CheckRequest;
    try {
      req = fromBinary(CheckRequestSchema, bytes);
    } catch {
      return { trailer: statusTrailers(Code.InvalidArgument, "the request is not a CheckRequest") };
    }
    try {
      const answer = await authorize(gatewayRequest(req, header));
      return {
        message: toBinary(CheckResponseSchema, checkResponse(answer)),
        trailer: { "grpc-status": "0" },
      };
    } catch {
      // The authorization answers every failure itself; this is only a last resort.
      return { trailer: statusTrailers(Code.Internal, "internal error") };
    }
  });
}
