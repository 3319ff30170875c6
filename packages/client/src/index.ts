import type { DescService } from "@bufbuild/protobuf";
import { type Client, createClient, type Interceptor, type Transport } from "@connectrpc/connect";
import { createConnectTransport, createGrpcWebTransport } from "@connectrpc/connect-web";
import { AnalyticsService } from "../../../gen/latchkey/v2/analytics_pb.js";
import { ApisService } from "../../../gen/latchkey/v2/apis_pb.js";
import { IdentitiesService } from "../../../gen/latchkey/v2/identities_pb.js";
import { KeysService } from "../../../gen/latchkey/v2/keys_pb.js";
import { LivenessService } from "../../../gen/latchkey/v2/liveness_pb.js";
import { PermissionsService } from "../../../gen/latchkey/v2/permissions_pb.js";
import { RatelimitService } from "../../../gen/latchkey/v2/ratelimit_pb.js";
import { WebhooksService } from "../../../gen/latchkey/v2/webhooks_pb.js";

// What a caller needs to read a refusal, so that it need not depend on Connect itself.
export { Code, ConnectError } from "@connectrpc/connect";
export * from "../../../gen/latchkey/v2/analytics_pb.js";
export * from "../../../gen/latchkey/v2/apis_pb.js";
export * from "../../../gen/latchkey/v2/common_pb.js";
export * from "../../../gen/latchkey/v2/identities_pb.js";
export * from "../../../gen/latchkey/v2/keys_pb.js";
export * from "../../../gen/latchkey/v2/liveness_pb.js";
export * from "../../../gen/latchkey/v2/permissions_pb.js";
export * from "../../../gen/latchkey/v2/ratelimit_pb.js";
export * from "../../../gen/latchkey/v2/webhooks_pb.js";

/** How to reach Latchkey's main port over `fetch` (Node 20+, browsers, other runtimes). */
export interface LatchkeyClientOptions {
  /** The main port, `http://host:8080`: it serves Connect and gRPC-web. */
  baseUrl: string;
  /** The root key, sent as `Authorization: Bearer <rootKey>`; keys.verifyKey works without. */
  rootKey?: string;
  /** `connect` (default) or `grpc-web`. */
  protocol?: "connect" | "grpc-web";
  /** Protobuf binary instead of JSON (Connect only; gRPC-web is always binary). Default false. */
  useBinaryFormat?: boolean;
  /** The `fetch` to call with; default `globalThis.fetch`. */
  fetch?: typeof globalThis.fetch;
}

/**
 * Any Connect transport instead, for what `fetch` cannot do: gRPC over HTTP/2 from Node
 * (`createGrpcTransport` of `@connectrpc/connect-node`, on Latchkey's gRPC port), or a transport
 * with interceptors of your own. Add {@link rootKeyInterceptor} to its interceptors to
 * authenticate.
 */
export interface LatchkeyTransportOptions {
  transport: Transport;
}

/** One typed client per Latchkey service, sharing one transport. */
export interface LatchkeyClient {
  apis: Client<typeof ApisService>;
  keys: Client<typeof KeysService>;
  identities: Client<typeof IdentitiesService>;
  permissions: Client<typeof PermissionsService>;
  ratelimit: Client<typeof RatelimitService>;
  webhooks: Client<typeof WebhooksService>;
  analytics: Client<typeof AnalyticsService>;
  liveness: Client<typeof LivenessService>;
}

/** An interceptor that sends `Authorization: Bearer <rootKey>` on every call. */
export function rootKeyInterceptor(rootKey: string): Interceptor {
  return (next) => (req) => {
    req.header.set("authorization", `Bearer ${rootKey}`);
    return next(req);
  };
}

/**
 * The generated Connect clients of every Latchkey service. Given a base URL it calls over
 * `fetch` with the Connect protocol (JSON unless `useBinaryFormat`) or gRPC-web; given a
 * transport it uses that one. A refused call throws a ConnectError whose `ErrorDetail` carries
 * the catalog code, status, title, detail and the violations of a 400.
 */
export function createLatchkeyClient(
  options: LatchkeyClientOptions | LatchkeyTransportOptions,
): LatchkeyClient {
  const transport = "transport" in options ? options.transport : fetchTransport(options);
  const client = <T extends DescService>(service: T) => createClient(service, transport);
  return {
    apis: client(ApisService),
    keys: client(KeysService),
    identities: client(IdentitiesService),
    permissions: client(PermissionsService),
    ratelimit: client(RatelimitService),
    webhooks: client(WebhooksService),
    analytics: client(AnalyticsService),
    liveness: client(LivenessService),
  };
}

function fetchTransport(options: LatchkeyClientOptions): Transport {
  const interceptors = options.rootKey ? [rootKeyInterceptor(options.rootKey)] : [];
  const common = { baseUrl: options.baseUrl, interceptors, fetch: options.fetch };
  const protocol = options.protocol ?? "connect";
  if (protocol === "grpc-web") return createGrpcWebTransport(common);
  if (protocol === "connect") {
    return createConnectTransport({ ...common, useBinaryFormat: options.useBinaryFormat ?? false });
  }
  // A caller without types (plain JavaScript) may pass the old `grpc`: say what to do instead.
  throw new TypeError(
    `protocol must be "connect" or "grpc-web", not ${JSON.stringify(protocol)}; for gRPC over ` +
      "HTTP/2 pass { transport: createGrpcTransport(...) } from @connectrpc/connect-node",
  );
}
