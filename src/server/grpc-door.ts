import type { ServerResponse } from "node:http";
import type { Http2ServerRequest, Http2ServerResponse, IncomingHttpHeaders } from "node:http2";
import { fromBinary, type Message, toBinary } from "@bufbuild/protobuf";
import { Code, type Interceptor, type ServiceImplSpec } from "@connectrpc/connect";
import { Authorization } from "../../gen/envoy/service/auth/v3/external_auth_pb.js";
import { newId } from "../domain/ids.js";
import type { Readiness } from "../health/readiness.js";
import type { Logger } from "../log.js";
import { type Call, callValues } from "../services/call.js";
import type { ConnectionCounters, ConnectionLimits } from "./connection-limits.js";
import type { GatewayAnswer } from "./gateway/answer.js";
import type { GatewayRequest } from "./gateway/exchange.js";
import { extAuthzRoute } from "./gateway/ext-authz.js";
import { healthRoutes } from "./grpc-health.js";
import type { GrpcAnswer, GrpcRoute, GrpcRoutes, StreamCall } from "./grpc-routes.js";
import {
  type CallerFault,
  decompress,
  errorTrailers,
  FrameReader,
  frame,
  OK_TRAILERS,
  requestEncoding,
  statusTrailers,
  TimeoutFault,
  timeoutMs,
  WireFault,
} from "./grpc-wire.js";
import { toServiceError } from "./interceptors/request-context.js";
import { bindRefusal, bindUnary, type UnarySpec } from "./invoke.js";
import { listen } from "./listener.js";
import { LiteHeaders } from "./lite-headers.js";
import type { NodeRequest, NodeResponse } from "./node-io.js";

type Req = Http2ServerRequest;
type Res = Http2ServerResponse;

import { reflectionRoutes } from "./reflection.js";

/** What the gRPC door needs. */
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
  /** Health Watch streams open at once (MAX_HEALTH_WATCHES by default). */
  maxHealthWatches?: number;
}

/** A running gRPC port. */
export interface GrpcDoor {
  readonly port: number;
  drain(timeoutMs: number): Promise<void>;
}

/** setTimeout's longest delay: a grpc-timeout beyond it (up to 11,000 years) never fires. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** What the door knows of a call of `path` before invoking it: its state and its init. */
function callOf(path: string, header: IncomingHttpHeaders) {
  const state: Call = { requestId: newId("req"), door: "grpc" };
  const init = {
    protocolName: "grpc",
    requestMethod: "POST",
    url: path,
    header: LiteHeaders.fromNode(header),
    values: callValues(state),
  };
  return { state, init };
}

/** A record of a bag of headers (the procedure's response headers or trailers). */
function recordOf(headers: LiteHeaders, into: Record<string, string>): Record<string, string> {
  for (const [name, value] of headers) into[name] = value;
  return into;
}

/**
 * The route of one of Latchkey's unary procedures: the request decoded, the procedure called
 * through the interceptors (bound once), the answer encoded. A request that cannot be read
 * (bytes that are not the message, a malformed grpc-timeout, a message that does not
 * decompress) goes through the same interceptors with the fault as its only violation, so the
 * root key is checked first and the refusal is logged, counted and carries the ErrorDetail,
 * as on every other door; the procedure itself never runs.
 */
function procedureRoute(spec: UnarySpec, opts: GrpcDoorOptions): GrpcRoute {
  const path = `/${spec.method.parent.typeName}/${spec.method.name}`;
  const { input, output } = spec.method;
  const invoke = bindUnary(spec, opts.interceptors);
  const refuseBound = bindRefusal(spec, opts.interceptors);
  const failed = (thrown: unknown, requestId: string): GrpcAnswer => ({
    trailer: errorTrailers(toServiceError(thrown, opts.log, requestId)),
  });

  const refuse = async (fault: CallerFault, header: IncomingHttpHeaders): Promise<GrpcAnswer> => {
    const { state, init } = callOf(path, header);
    return failed(await refuseBound(init, [fault]), state.requestId);
  };

  return {
    kind: "unary",
    refuse,
    async call(bytes, header) {
      let message: Message;
      try {
        message = fromBinary(input, bytes);
      } catch (err) {
        const reason = err instanceof Error ? err.message : String(err);
        return refuse(
          { location: "", message: `is not a valid protobuf message: ${reason}` },
          header,
        );
      }
      const { state, init } = callOf(path, header);
      try {
        const result = await invoke(init, message);
        return {
          header: recordOf(result.header, {}),
          message: toBinary(output, result.message),
          trailer: result.trailer.isEmpty()
            ? OK_TRAILERS
            : recordOf(result.trailer, { ...OK_TRAILERS }),
        };
      } catch (thrown) {
        return failed(thrown, state.requestId);
      }
    },
  };
}

/** Answers a call: headers, the message if any, then the status and trailers. */
function answer(res: Res, a: GrpcAnswer): void {
  if (res.writableEnded || res.destroyed) return;
  const head: Record<string, string> = { "content-type": "application/grpc" };
  if (a.header) Object.assign(head, a.header);
  res.writeHead(200, head);
  res.addTrailers(a.trailer);
  if (a.message) res.end(frame(a.message));
  else res.end();
}

/** An HTTP answer for a request that is not a gRPC call at all (the gRPC spec's 415 and such). */
function notGrpc(res: NodeResponse, status: number, text: string): void {
  // Both kinds of response take this call; their overloads differ in what this does not use.
  const r = res as Pick<ServerResponse, "writeHead" | "end">;
  r.writeHead(status, { "content-type": "text/plain; charset=utf-8" });
  r.end(`${text}\n`);
}

/** The last resort when answering a call failed itself. */
const INTERNAL: GrpcAnswer = { trailer: statusTrailers(Code.Internal, "internal error") };

/** Answers a fault the door found itself (see faultAnswer). */
function answerFault(route: GrpcRoute, err: unknown, req: Req, res: Res): void {
  faultAnswer(route, err, req.headers).then(
    (a) => answer(res, a),
    () => answer(res, INTERNAL),
  );
}

/** The answer for a fault the door found itself: through the route, or a bare status. */
function faultAnswer(route: GrpcRoute, err: unknown, header: IncomingHttpHeaders) {
  if (err instanceof TimeoutFault) {
    return route.kind === "unary"
      ? route.refuse(err.fault, header)
      : Promise.resolve({
          trailer: statusTrailers(Code.InvalidArgument, `grpc-timeout: ${err.message}`),
        });
  }
  if (err instanceof WireFault && err.code === Code.InvalidArgument && route.kind === "unary") {
    return route.refuse({ location: "", message: err.message }, header);
  }
  if (err instanceof WireFault)
    return Promise.resolve({ trailer: statusTrailers(err.code, err.message) });
  throw err;
}

/** A unary call: one request message, read whole, then one answer. */
function serveUnary(
  route: Extract<GrpcRoute, { kind: "unary" }>,
  req: Req,
  res: Res,
  encoding: "gzip" | "deflate" | undefined,
  deadlineMs: number | undefined,
  maxBytes: number,
): void {
  let answered = false;
  let timer: NodeJS.Timeout | undefined;
  /** True the first time only: the call is answered once, by whichever comes first. */
  const settle = () => {
    if (answered) return false;
    answered = true;
    clearTimeout(timer);
    return true;
  };
  const reply = (a: GrpcAnswer) => {
    if (settle()) answer(res, a);
  };
  const fail = (err: unknown) => {
    if (settle()) answerFault(route, err, req, res);
  };
  if (deadlineMs !== undefined && deadlineMs < MAX_TIMER_MS) {
    timer = setTimeout(
      () =>
        reply({ trailer: statusTrailers(Code.DeadlineExceeded, "the call's grpc-timeout passed") }),
      Math.max(1, deadlineMs),
    );
    timer.unref();
  }
  const reader = new FrameReader(maxBytes);
  let message: { compressed: boolean; bytes: Buffer } | undefined;
  let count = 0;
  req.on("data", (chunk: Buffer) => {
    if (answered) return;
    try {
      for (const m of reader.push(chunk)) {
        count++;
        message ??= m;
      }
    } catch (err) {
      fail(err);
    }
  });
  req.on("end", () => {
    if (answered) return;
    try {
      if (reader.leftover > 0) {
        throw new WireFault(Code.InvalidArgument, "the request ends inside a message frame");
      }
      if (count !== 1 || message === undefined) {
        throw new WireFault(
          Code.InvalidArgument,
          `a unary call carries exactly one request message (this one carried ${count})`,
        );
      }
      const bytes = message.compressed
        ? decompress(message.bytes, encoding, maxBytes)
        : message.bytes;
      route.call(bytes, req.headers).then(reply, () => reply(INTERNAL));
    } catch (err) {
      fail(err);
    }
  });
}

/** Most a streaming answer buffers before the door stops reading its caller's requests. */
const STREAM_HIGH_WATER_BYTES = 1 << 20;

/** A streaming call: each request message handed to the route as it arrives. */
function serveStream(
  route: Extract<GrpcRoute, { kind: "stream" }>,
  req: Req,
  res: Res,
  encoding: "gzip" | "deflate" | undefined,
  maxBytes: number,
): void {
  let ended = false;
  const start = () => {
    if (!res.headersSent) res.writeHead(200, { "content-type": "application/grpc" });
  };
  const call: StreamCall = {
    header: req.headers,
    write(bytes) {
      if (ended || res.destroyed) return;
      start();
      res.write(frame(bytes));
      // A caller that sends requests without reading the answers is read no further.
      if (res.writableLength > STREAM_HIGH_WATER_BYTES && !req.isPaused()) {
        req.pause();
        res.once("drain", () => req.resume());
      }
    },
    end(trailer) {
      if (ended) return;
      ended = true;
      if (res.writableEnded || res.destroyed) return;
      start();
      res.addTrailers(trailer);
      res.end();
    },
  };
  const handlers = route.open(call);
  const reader = new FrameReader(maxBytes);
  req.on("data", (chunk: Buffer) => {
    if (ended) return;
    try {
      for (const m of reader.push(chunk)) {
        handlers.message?.(m.compressed ? decompress(m.bytes, encoding, maxBytes) : m.bytes);
      }
    } catch (err) {
      const code = err instanceof WireFault ? err.code : Code.Internal;
      call.end(statusTrailers(code, err instanceof Error ? err.message : "internal error"));
    }
  });
  req.on("end", () => {
    if (!ended) handlers.end?.();
  });
  res.on("close", () => {
    if (ended) return;
    ended = true;
    handlers.cancel?.();
  });
}

/** The handler of every request on the gRPC port. */
function grpcHandler(routes: GrpcRoutes, maxBytes: number) {
  return (anyReq: NodeRequest, anyRes: NodeResponse): void => {
    if (!("stream" in anyRes)) {
      notGrpc(anyRes, 505, "this port serves gRPC over cleartext HTTP/2 (prior knowledge) only");
      return;
    }
    const req = anyReq as Req;
    const res = anyRes;
    if (req.method !== "POST") {
      notGrpc(res, 405, "gRPC calls are POST requests");
      return;
    }
    const contentType = req.headers["content-type"];
    if (typeof contentType !== "string" || !contentType.startsWith("application/grpc")) {
      notGrpc(res, 415, "a gRPC call's content-type is application/grpc");
      return;
    }
    const path = req.url ?? "";
    const route = routes.get(path);
    if (route === undefined) {
      answer(res, {
        trailer: statusTrailers(Code.Unimplemented, `this server has no method ${path}`),
      });
      return;
    }
    let encoding: "gzip" | "deflate" | undefined;
    let deadlineMs: number | undefined;
    try {
      encoding = requestEncoding(req.headers["grpc-encoding"] as string | undefined);
      deadlineMs = timeoutMs(req.headers["grpc-timeout"] as string | undefined);
    } catch (err) {
      // Answered at once: nothing of the request is needed to refuse it.
      req.resume();
      answerFault(route, err, req, res);
      return;
    }
    if (route.kind === "unary") serveUnary(route, req, res, encoding, deadlineMs, maxBytes);
    else serveStream(route, req, res, encoding, maxBytes);
  };
}

/**
 * The gRPC port: gRPC over cleartext HTTP/2, on the same listener as the main port (so the
 * same connection bounds: connections, idle and header deadlines, request deadline, streams
 * per session, pings, a graceful drain), with gRPC's framing done here (grpc-wire.ts) and
 * every procedure bound once to the same implementations and interceptors as the other
 * doors. It also serves gRPC server reflection (v1 and v1alpha) and `grpc.health.v1.Health`,
 * both without authentication, and with `gateway` Envoy's ext_authz service.
 *
 * Why not a gRPC library's server: the port's cost per call is most of a verification's
 * cost, and a general server pays for interceptor chains, call objects and metadata copies
 * per call that this one has no use for; errors also need our ErrorDetail, and the caller's
 * faults (a bad grpc-timeout, a message that does not decompress) need the same refusal as
 * on every other door, which a library answers INTERNAL below any hook.
 */
export async function startGrpcDoor(opts: GrpcDoorOptions): Promise<GrpcDoor> {
  const routes: GrpcRoutes = new Map();
  for (const s of opts.services) {
    for (const m of Object.values(s.methods)) {
      if (m.kind !== "unary") continue;
      routes.set(`/${s.service.typeName}/${m.method.name}`, procedureRoute(m, opts));
    }
  }
  const served = opts.services.map((s) => s.service);
  if (opts.gateway) {
    routes.set(
      `/${Authorization.typeName}/${Authorization.method.check.name}`,
      extAuthzRoute(opts.gateway),
    );
    served.push(Authorization);
  }
  for (const [path, route] of reflectionRoutes(served)) routes.set(path, route);
  const health = healthRoutes(
    opts.readiness,
    served.map((s) => s.typeName),
    opts.maxHealthWatches,
  );
  for (const [path, route] of health.routes) routes.set(path, route);
  const listener = await listen(
    grpcHandler(routes, opts.maxBodyBytes),
    opts.port,
    opts.host,
    opts.limits,
    opts.counters,
  );
  return {
    port: listener.port,
    async drain(timeoutMs: number) {
      // Health watches never end by themselves: a drain would wait for them until its timeout.
      health.close();
      await listener.drain(timeoutMs);
    },
  };
}
