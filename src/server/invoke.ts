import { create, type DescMessage, type Message } from "@bufbuild/protobuf";
import type {
  ContextValues,
  HandlerContext,
  Interceptor,
  MethodImplSpec,
  UnaryRequest,
  UnaryResponse,
} from "@connectrpc/connect";
import { errors, type Violation } from "../errors/service-error.js";
import { callOf } from "../services/call.js";
import { LiteHeaders } from "./lite-headers.js";

/** The implementation spec of a unary RPC. */
export type UnarySpec = Extract<MethodImplSpec, { kind: "unary" }>;

/**
 * Calls one procedure through the interceptors; returns the response, its headers and its
 * trailers, kept apart: gRPC sends trailers after the message, never with the headers.
 */
export type BoundProcedure = (
  call: CallInit,
  input: Message,
) => Promise<{ message: Message; header: LiteHeaders; trailer: LiteHeaders }>;

/** What a door knows about a call before invoking the procedure. */
export interface CallInit {
  protocolName: string;
  requestMethod: string;
  url: string;
  header: LiteHeaders;
  values: ContextValues;
}

/** Never aborted: the /v2 door and the gRPC port do not cancel a unary call when its client leaves. */
const NEVER = new AbortController().signal;
const noTimeout = () => undefined;
const contextOf = Symbol("handler context");

type RequestWithContext = UnaryRequest & { [contextOf]: HandlerContext };

/**
 * Binds a unary implementation to the interceptors once, for the doors that call
 * implementations directly (/v2 and the gRPC port). Connect's own `invokeUnaryImplementation`
 * rebuilds the interceptor chain and three undici Headers and two AbortControllers on
 * every call; this does the same work with one context object per call. The interceptor
 * and implementation contracts are Connect's, unchanged: what a handler or interceptor sets
 * in `responseTrailer` comes back as the trailer, not among the headers.
 *
 * With `answer` "init shape" the handler's answer is passed on as the handler made it, which
 * may be a message's init shape rather than a message: for the /v2 door, whose encoder reads
 * either (json-codec.ts encodeJson), making the message would be work thrown away.
 */
export function bindUnary(
  spec: UnarySpec,
  interceptors: readonly Interceptor[],
  answer: "message" | "init shape" = "message",
): BoundProcedure {
  const method = spec.method;
  const service = method.parent;
  const output: DescMessage = method.output;
  const base = async (req: UnaryRequest | { stream: true }): Promise<UnaryResponse> => {
    const r = req as RequestWithContext;
    const ctx = r[contextOf];
    const result = await spec.impl(r.message, ctx);
    const message = (
      answer === "init shape" || (result as Message).$typeName === output.typeName
        ? result
        : create(output, result as never)
    ) as Message;
    return {
      stream: false,
      message,
      method,
      service,
      header: ctx.responseHeader,
      trailer: ctx.responseTrailer,
    } as UnaryResponse;
  };
  let chain = base as (req: UnaryRequest) => Promise<UnaryResponse>;
  for (let i = interceptors.length - 1; i >= 0; i--) {
    chain = (interceptors[i] as Interceptor)(chain as never) as (
      req: UnaryRequest,
    ) => Promise<UnaryResponse>;
  }
  return async (call, input) => {
    const responseHeader = new LiteHeaders();
    const responseTrailer = new LiteHeaders();
    const ctx: HandlerContext = {
      method,
      service,
      signal: NEVER,
      timeoutMs: noTimeout,
      requestMethod: call.requestMethod,
      requestHeader: call.header.asHeaders(),
      responseHeader: responseHeader.asHeaders(),
      responseTrailer: responseTrailer.asHeaders(),
      protocolName: call.protocolName,
      values: call.values,
      url: call.url,
    };
    const req = {
      stream: false,
      message: input,
      method,
      service,
      requestMethod: call.requestMethod,
      url: call.url,
      signal: NEVER,
      header: ctx.requestHeader,
      contextValues: call.values,
      [contextOf]: ctx,
    } as RequestWithContext;
    const res = await chain(req);
    return { message: res.message, header: responseHeader, trailer: responseTrailer };
  };
}

/**
 * Binds the refusal of a call a door could not read (a body that does not decode, a
 * malformed grpc-timeout): the procedure's own interceptors, so that the root key is checked
 * first and the refusal is logged, counted and carries the ErrorDetail as on every door, with
 * the door's violations as the call's only problem; the procedure itself never runs. Resolves
 * with what the interceptors threw.
 */
export function bindRefusal(
  spec: UnarySpec,
  interceptors: readonly Interceptor[],
): (call: CallInit, violations: Violation[]) => Promise<unknown> {
  const impl = () => {
    throw errors.unexpected(new Error("a refused request reached its procedure"));
  };
  const refuse = bindUnary({ ...spec, impl }, interceptors);
  return (call, violations) => {
    callOf(call.values).decodeViolations = violations;
    return refuse(call, create(spec.method.input)).then(
      () => errors.unexpected(new Error("a refused request was not refused")),
      (thrown: unknown) => thrown,
    );
  };
}
