import type { DescService } from "@bufbuild/protobuf";
import { type Client, createClient, type Interceptor } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import { AnalyticsService } from "../../gen/latchkey/v2/analytics_pb.js";
import { ApisService } from "../../gen/latchkey/v2/apis_pb.js";
import { IdentitiesService } from "../../gen/latchkey/v2/identities_pb.js";
import { KeysService } from "../../gen/latchkey/v2/keys_pb.js";
import { LivenessService } from "../../gen/latchkey/v2/liveness_pb.js";
import { PermissionsService } from "../../gen/latchkey/v2/permissions_pb.js";
import { RatelimitService } from "../../gen/latchkey/v2/ratelimit_pb.js";

export * from "../../gen/latchkey/v2/analytics_pb.js";
export * from "../../gen/latchkey/v2/apis_pb.js";
export * from "../../gen/latchkey/v2/common_pb.js";
export * from "../../gen/latchkey/v2/identities_pb.js";
export * from "../../gen/latchkey/v2/keys_pb.js";
export * from "../../gen/latchkey/v2/liveness_pb.js";
export * from "../../gen/latchkey/v2/permissions_pb.js";
export * from "../../gen/latchkey/v2/ratelimit_pb.js";

/** How to reach Latchkey. */
export interface LatchkeyClientOptions {
  /** `http://host:8080` for Connect (JSON or binary), `http://host:9090` for gRPC. */
  baseUrl: string;
  /** The root key, sent as `Authorization: Bearer <rootKey>`; keys.verifyKey works without. */
  rootKey?: string;
  /** `connect` (default; HTTP/1.1, JSON) or `grpc` (HTTP/2, binary). */
  protocol?: "connect" | "grpc";
}

/** One typed client per Latchkey service, sharing one transport. */
export interface LatchkeyClient {
  apis: Client<typeof ApisService>;
  keys: Client<typeof KeysService>;
  identities: Client<typeof IdentitiesService>;
  permissions: Client<typeof PermissionsService>;
  ratelimit: Client<typeof RatelimitService>;
  analytics: Client<typeof AnalyticsService>;
  liveness: Client<typeof LivenessService>;
}

/**
 * The generated Connect clients of every Latchkey service, over Connect (JSON) or gRPC.
 * Errors arrive as ConnectError with the catalog code in the ErrorDetail.
 */
export function createLatchkeyClient(options: LatchkeyClientOptions): LatchkeyClient {
  const auth: Interceptor = (next) => (req) => {
    if (options.rootKey) req.header.set("authorization", `Bearer ${options.rootKey}`);
    return next(req);
  };
  const transport =
    options.protocol === "grpc"
      ? createGrpcTransport({ baseUrl: options.baseUrl, interceptors: [auth] })
      : createConnectTransport({
          baseUrl: options.baseUrl,
          httpVersion: "1.1",
          useBinaryFormat: false,
          interceptors: [auth],
        });
  const client = <T extends DescService>(service: T) => createClient(service, transport);
  return {
    apis: client(ApisService),
    keys: client(KeysService),
    identities: client(IdentitiesService),
    permissions: client(PermissionsService),
    ratelimit: client(RatelimitService),
    analytics: client(AnalyticsService),
    liveness: client(LivenessService),
  };
}
