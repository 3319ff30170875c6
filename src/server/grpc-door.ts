import { create, type DescMessage, fromBinary, type Message, toBinary } from "@bufbuild/protobuf";
import type { ConnectError, Interceptor, ServiceImplSpec } from "@connectrpc/connect";
import { setTrailerStatus } from "@connectrpc/connect/protocol-grpc";
import * as grpc from "@grpc/grpc-js";
import { Authorization } from "../../gen/envoy/service/auth/v3/external_auth_pb.js";
import { newId } from "../domain/ids.js";
import { errors } from "../errors/service-error.js";
import type { Readiness } from "../health/readiness.js";
import type { Logger } from "../log.js";
import { type Call, callValues } from "../services/call.js";
import { grpcConnections } from "./connection-grpc.js";
import type { ConnectionCounters, ConnectionLimits } from "./connection-limits.js";
import type { GatewayAnswer } from "./gateway/answer.js";
import type { GatewayRequest } from "./gateway/exchange.js";
import { addExtAuthz } from "./gateway/ext-authz.js";
import { answerCallerFaults, type RefuseCall } from "./grpc-caller-faults.js";
import { addHealthService } from "./grpc-health.js";
import { toServiceError } from "./interceptors/request-context.js";
import { bindUnary, type CallInit, type UnarySpec } from "./invoke.js";
import { LiteHeaders } from "./lite-headers.js";
import { addReflection } from "./reflection.js";

/** What the grpc-js door needs. */
export interface GrpcDoorOptions {
  services: readonly ServiceImplSpec[];
  interceptors: Interceptor[];
  maxBodyBytes: number;
  log: Logger;
  port: number;
  host: string;
  limits: ConnectionLimits;
  counters: ConnectionCounters;
  /** What `grpc.health.v1.Health` reports. */
  readiness: Readiness;
  /** Serves Envoy's ext_authz `Authorization/Check` with this authorization, when given. */
  gateway?: (r: GatewayRequest) => Promise<GatewayAnswer>;
}

/** A running grpc-js server. */
export interface GrpcDoor {
  readonly port: number;
  drain(timeoutMs: number): Promise<void>;
}

function headersOf(metadata: grpc.Metadata): LiteHeaders {
  const h = new LiteHeaders();
  for (const [name, value] of Object.entries(metadata.getMap())) {
    if (typeof value === "string") h.set(name, value);
  }
  return h;
}

/** Trailers as grpc-js trailing metadata; undefined when there are none. */
function metadataOf(trailer: LiteHeaders): grpc.Metadata | undefined {
  if (trailer.isEmpty()) return undefined;
  const metadata = new grpc.Metadata();
  for (const [name, value] of trailer) {
    if (name.endsWith("-bin")) metadata.set(name, Buffer.from(value, "base64"));
    else metadata.set(name, value);
  }
  return metadata;
}

/** The gRPC status of a failed call: code, message, and the ErrorDetail in grpc-status-details-bin. */
function toGrpcError(err: ConnectError): grpc.StatusObject {
  const metadata = new grpc.Metadata();
  for (const [name, value] of setTrailerStatus(new Headers(), err)) {
    if (name === "grpc-status" || name === "grpc-message") continue;
    if (name.endsWith("-bin")) metadata.set(name, Buffer.from(value, "base64"));
    else metadata.set(name, value);
  }
  return { code: err.code as number as grpc.status, details: err.rawMessage, metadata };
}

/** Marks a request the door could not decode, with the decoder's reason. */
const UNDECODABLE = Symbol("undecodable");
interface Undecodable {
  [UNDECODABLE]: string;
}

/**
 * Decodes a request; bytes that are not a valid message (or nest deeper than the decoder
 * allows) become an Undecodable marker, answered INVALID_ARGUMENT by the handler.
 */
function decodeRequest(input: DescMessage, buf: Buffer): Message {
  try {
    return fromBinary(input, buf);
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    return { [UNDECODABLE]: reason } as unknown as Message;
  }
}

/** What the door knows of a call of `path` before invoking it: its state and its init. */
function callOf(path: string, metadata: grpc.Metadata): { state: Call; init: CallInit } {
  const state: Call = {
    requestId: newId("req"),
    door: "grpc",
  };
  const init = {
    protocolName: "grpc",
    requestMethod: "POST",
    url: path,
    header: headersOf(metadata),
    values: callValues(state),
  };
  return { state, init };
}

/**
 * Refuses a call that grpc-js itself found faulty (see grpc-caller-faults.ts) as the
 * other doors refuse an invalid request: through the shared interceptors, so the root key
 * is checked first and the answer is logged, counted and carries the ErrorDetail. The
 * procedure itself is never bound: only the validation of the fault can answer.
 */
function refusals(opts: GrpcDoorOptions): RefuseCall {
  const byPath = new Map<string, { spec: UnarySpec; refuse: ReturnType<typeof bindUnary> }>();
  for (const s of opts.services) {
    for (const m of Object.values(s.methods)) {
      if (m.kind !== "unary") continue;
      const impl = () => {
        throw errors.unexpected(new Error("a refused request reached its procedure"));
      };
      byPath.set(`/${s.service.typeName}/${m.method.name}`, {
        spec: m,
        refuse: bindUnary({ ...m, impl }, opts.interceptors),
      });
    }
  }
  return async (path, metadata, fault) => {
    const bound = byPath.get(path);
    if (!bound) return { code: grpc.status.INVALID_ARGUMENT, details: fault.message };
    const { state, init } = callOf(path, metadata);
    state.decodeViolations = [fault];
    try {
      await bound.refuse(init, create(bound.spec.method.input));
    } catch (thrown) {
      return toGrpcError(toServiceError(thrown, opts.log, state.requestId));
    }
    return toGrpcError(errors.unexpected(new Error("a refused request was not refused")));
  };
}

function handler(spec: UnarySpec, opts: GrpcDoorOptions): grpc.handleUnaryCall<Message, Message> {
  const path = `/${spec.method.parent.typeName}/${spec.method.name}`;
  const invoke = bindUnary(spec, opts.interceptors);
  return (call, callback) => {
    const { state, init } = callOf(path, call.metadata);
    if (UNDECODABLE in call.request) {
      // grpc-js would answer a throwing deserializer with INTERNAL; the caller sent bad bytes.
      const reason = (call.request as unknown as Undecodable)[UNDECODABLE];
      callback(
        toGrpcError(toServiceError(errors.bodyUnreadable(reason), opts.log, state.requestId)),
      );
      return;
    }
    invoke(init, call.request).then(
      (result) => {
        const header = new grpc.Metadata();
        for (const [name, value] of result.header) header.set(name, value);
        call.sendMetadata(header);
        // Trailers go out with the status, after the message (grpc-js sends grpc-status).
        callback(null, result.message, metadataOf(result.trailer));
      },
      (thrown: unknown) => {
        callback(toGrpcError(toServiceError(thrown, opts.log, state.requestId)));
      },
    );
  };
}

/**
 * gRPC through a @grpc/grpc-js server bound to the same implementations and the same
 * interceptors as the other doors, on a port of its own (grpc-js owns whole HTTP/2
 * connections), with the same connection bounds as the main port. Errors carry the same ErrorDetail as Connect's gRPC. It also serves gRPC
 * server reflection (v1 and v1alpha) for those services and `grpc.health.v1.Health`
 * (grpc-health.ts), both without authentication, and with `gateway` Envoy's ext_authz
 * service (gateway/ext-authz.ts).
 */
export async function startGrpcDoor(opts: GrpcDoorOptions): Promise<GrpcDoor> {
  const connections = grpcConnections(opts.limits, opts.counters);
  const server = new grpc.Server({
    ...connections.serverOptions,
    // First, so that it receives grpc-js's own call object (see grpc-caller-faults.ts).
    interceptors: [
      answerCallerFaults(refusals(opts)),
      ...(connections.serverOptions.interceptors ?? []),
    ],
    "grpc.max_receive_message_length": opts.maxBodyBytes,
    "grpc.keepalive_time_ms": 30_000,
    "grpc.keepalive_timeout_ms": 10_000,
  });
  for (const s of opts.services) {
    const definition: Record<string, grpc.MethodDefinition<Message, Message>> = {};
    const impl: grpc.UntypedServiceImplementation = {};
    for (const m of Object.values(s.methods)) {
      if (m.kind !== "unary") continue;
      const { input, output } = m.method;
      definition[m.method.localName] = {
        path: `/${s.service.typeName}/${m.method.name}`,
        requestStream: false,
        responseStream: false,
        requestSerialize: (msg: Message) => Buffer.from(toBinary(input, msg)),
        requestDeserialize: (buf: Buffer) => decodeRequest(input, buf),
        responseSerialize: (msg: Message) => Buffer.from(toBinary(output, msg)),
        responseDeserialize: (buf: Buffer) => fromBinary(output, buf),
      };
      impl[m.method.localName] = handler(m, opts);
    }
    server.addService(definition, impl);
  }
  const served = opts.services.map((s) => s.service);
  if (opts.gateway) {
    addExtAuthz(server, opts.gateway);
    served.push(Authorization);
  }
  addReflection(server, served);
  const health = addHealthService(
    server,
    opts.readiness,
    served.map((s) => s.typeName),
  );
  const listener = await connections.listen(server, opts.port, opts.host);
  return {
    port: listener.port,
    async drain(timeoutMs: number) {
      // Health watches never end by themselves: a drain would wait for them until its timeout.
      health.close();
      const deadline = Date.now() + timeoutMs;
      const closed = listener.stopAccepting();
      await new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          server.forceShutdown();
          resolve();
        }, timeoutMs);
        server.tryShutdown(() => {
          clearTimeout(timer);
          resolve();
        });
      });
      // A session closed by grpc-js may still be writing its last frames (a call's final
      // message and trailers) to its socket: destroying the socket now would lose them. So
      // the sockets get what is left of the timeout to close by themselves.
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.max(0, deadline - Date.now()));
        void closed.then(() => {
          clearTimeout(timer);
          resolve();
        });
      });
      listener.destroy();
      await closed;
    },
  };
}
