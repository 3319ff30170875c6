import type { IncomingHttpHeaders } from "node:http2";
import { Code } from "@connectrpc/connect";
import { type CallerFault, type StatusTrailers, statusTrailers } from "./grpc-wire.js";

/**
 * What the gRPC port serves, by path (`/latchkey.v2.KeysService/VerifyKey`): each route
 * works on message bytes; the door (grpc-door.ts) does the framing, the faults of the wire and
 * the HTTP/2 side.
 */
export type GrpcRoutes = Map<string, GrpcRoute>;

/** A call's answer: its response headers, its message (none for a failure), its trailers. */
export interface GrpcAnswer {
  header?: Record<string, string>;
  message?: Uint8Array;
  /** grpc-status, grpc-message and grpc-status-details-bin, and any trailers of the call. */
  trailer: StatusTrailers;
}

/** One request message in, one answer out. */
export interface UnaryRoute {
  kind: "unary";
  /** Answers the request message; never rejects (a failure is an answer with its status). */
  call(request: Uint8Array, header: IncomingHttpHeaders): Promise<GrpcAnswer>;
  /** Answers a call the door could not read (a malformed grpc-timeout, say). */
  refuse(fault: CallerFault, header: IncomingHttpHeaders): Promise<GrpcAnswer>;
}

/** A streaming call as its route sees it. */
export interface StreamCall {
  header: IncomingHttpHeaders;
  /** Sends one response message. */
  write(message: Uint8Array): void;
  /** Ends the call with this status; later writes are dropped. */
  end(trailer: StatusTrailers): void;
}

/** What a streaming route does as its call goes on; every handler is optional. */
export interface StreamHandlers {
  /** One request message. */
  message?(bytes: Uint8Array): void;
  /** The caller has sent its last message. */
  end?(): void;
  /** The call ended before the route ended it (the caller cancelled or went away). */
  cancel?(): void;
}

/** Request messages arrive as they come; answers go out as the route writes them. */
export interface StreamRoute {
  kind: "stream";
  open(call: StreamCall): StreamHandlers;
}

export type GrpcRoute = UnaryRoute | StreamRoute;

/** A unary route whose refusals need no interceptors: INVALID_ARGUMENT with the fault. */
export function plainUnary(call: UnaryRoute["call"]): UnaryRoute {
  return {
    kind: "unary",
    call,
    refuse: async (fault) => ({
      trailer: statusTrailers(
        Code.InvalidArgument,
        fault.location === "" ? fault.message : `${fault.location}: ${fault.message}`,
      ),
    }),
  };
}
