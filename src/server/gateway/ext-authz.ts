import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import * as grpc from "@grpc/grpc-js";
import {
  Authorization,
  type CheckRequest,
  CheckRequestSchema,
  type CheckResponse,
  CheckResponseSchema,
} from "../../../gen/envoy/service/auth/v3/external_auth_pb.js";
import { POLICY_HEADERS } from "../../domain/gateway-policy.js";
import { parseIp } from "../../domain/networks.js";
import type { GatewayAnswer } from "./answer.js";
import type { GatewayRequest } from "./exchange.js";

/** The gRPC status of each HTTP status a refusal can have (google.rpc.Code numbers). */
const GRPC_CODES: Record<number, number> = {
  400: grpc.status.INVALID_ARGUMENT,
  401: grpc.status.UNAUTHENTICATED,
  403: grpc.status.PERMISSION_DENIED,
  412: grpc.status.FAILED_PRECONDITION,
  429: grpc.status.RESOURCE_EXHAUSTED,
  503: grpc.status.UNAVAILABLE,
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
function gatewayRequest(req: CheckRequest, metadata: grpc.Metadata): GatewayRequest {
  const headers = headersOf(req);
  const extensions = req.attributes?.contextExtensions ?? {};
  const authorization = metadata.get("authorization")[0];
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

/** What the deserializer hands the handler for bytes that are no CheckRequest. */
const UNDECODABLE = Object.freeze({ undecodable: true });

const asOptions = (headers: Record<string, string>) =>
  Object.entries(headers).map(([key, value]) => ({ header: { key, value } }));

/** The answer as Envoy expects it: OK with header changes, or a denial carrying the HTTP answer. */
function checkResponse(answer: GatewayAnswer): CheckResponse {
  if (answer.status === 200) {
    return create(CheckResponseSchema, {
      status: { code: grpc.status.OK },
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
    status: { code: GRPC_CODES[answer.status] ?? grpc.status.INTERNAL },
    httpResponse: {
      case: "deniedResponse",
      value: { status: { code: answer.status }, headers: asOptions(headers), body: answer.body },
    },
  });
}

/**
 * Serves Envoy's `envoy.service.auth.v3.Authorization/Check` (ext_authz over gRPC) on the
 * grpc-js server, with the same authorization as the forward-auth endpoint: Envoy sends the
 * root key as `authorization` metadata, the policy as the route's context extensions or as
 * headers, and the request's method, path, headers and source address. Bytes that are no
 * CheckRequest are INVALID_ARGUMENT.
 */
export function addExtAuthz(
  server: Pick<grpc.Server, "addService">,
  authorize: (r: GatewayRequest) => Promise<GatewayAnswer>,
): void {
  const method = Authorization.method.check;
  const definition: grpc.ServiceDefinition = {
    check: {
      path: `/${Authorization.typeName}/${method.name}`,
      requestStream: false,
      responseStream: false,
      requestSerialize: (m: CheckRequest) => Buffer.from(toBinary(CheckRequestSchema, m)),
      // A request that does not decode becomes a marker the handler refuses (grpc-js would
      // answer a throwing deserializer INTERNAL, and no message at all UNIMPLEMENTED).
      requestDeserialize: (buf: Buffer) => {
        try {
          return fromBinary(CheckRequestSchema, buf);
        } catch {
          return UNDECODABLE;
        }
      },
      responseSerialize: (m: CheckResponse) => Buffer.from(toBinary(CheckResponseSchema, m)),
      responseDeserialize: (buf: Buffer) => fromBinary(CheckResponseSchema, buf),
    },
  };
  const check: grpc.handleUnaryCall<CheckRequest | typeof UNDECODABLE, CheckResponse> = (
    call,
    callback,
  ) => {
    if (call.request === UNDECODABLE) {
      callback({
        code: grpc.status.INVALID_ARGUMENT,
        details: "the request is not a CheckRequest",
      });
      return;
    }
    authorize(gatewayRequest(call.request as CheckRequest, call.metadata)).then(
      (answer) => callback(null, checkResponse(answer)),
      // The authorization answers every failure itself; this is only a last resort.
      () => callback({ code: grpc.status.INTERNAL, details: "internal error" }),
    );
  };
  server.addService(definition, { check });
}
