import type { Interceptor } from "@connectrpc/connect";
import {
  type Attributes,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  type TextMapGetter,
  trace,
} from "@opentelemetry/api";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import { VerifyKeyCode, VerifyKeyResponseSchema } from "../../gen/latchkey/v2/keys_pb.js";
import { ServiceError } from "../errors/service-error.js";
import { callOf } from "../services/call.js";
import { procedureOf } from "../services/procedures.js";
import type { Tracing } from "./tracing.js";

const propagator = new W3CTraceContextPropagator();

/** Reads `traceparent` and `tracestate` from a request's headers (any door's). */
const headerGetter: TextMapGetter<Headers> = {
  get: (headers, name) => headers.get(name) ?? undefined,
  keys: () => ["traceparent", "tracestate"],
};

/**
 * The outermost interceptor while tracing is on: one SERVER span per procedure call on every
 * door, named `<service>/<method>` (`latchkey.v2.KeysService/VerifyKey`), the child of the
 * caller's W3C `traceparent` when one is sent. The span is the active context while the call
 * runs, so the database and Redis spans below it, and the log lines written meanwhile, belong
 * to it. It records the outcome and nothing a caller sent: no key, no root key, no body.
 */
export function procedureSpans(tracing: Tracing): Interceptor {
  return (next) => async (req) => {
    const parent = propagator.extract(ROOT_CONTEXT, req.header, headerGetter);
    const call = callOf(req.contextValues);
    const span = tracing.tracer.startSpan(
      `${req.service.typeName}/${req.method.name}`,
      {
        kind: SpanKind.SERVER,
        attributes: {
          "rpc.service": req.service.typeName,
          "rpc.method": req.method.name,
          "latchkey.procedure": procedureOf(req.method).name,
          "latchkey.door": call.door,
          "latchkey.request_id": call.requestId,
        },
      },
      parent,
    );
    try {
      const res = await tracing.with(trace.setSpan(parent, span), () => next(req));
      span.setAttributes(successAttributes(call.door, req.method.output.typeName, res.message));
      return res;
    } catch (err) {
      recordFailure(span, call.door, err);
      throw err;
    } finally {
      span.end();
    }
  };
}

function isGrpc(door: string): boolean {
  return door === "grpc" || door === "grpc-web";
}

/** A successful call's outcome; for a verification, its code (VALID, NOT_FOUND, …). */
function successAttributes(door: string, output: string, message: unknown): Attributes {
  const attributes: Attributes = { "latchkey.status": 200 };
  if (isGrpc(door)) attributes["rpc.grpc.status_code"] = 0;
  // The /v2 door's answer may be the handler's init shape, without a $typeName.
  const m = message as { data?: { code?: VerifyKeyCode } };
  if (output === VerifyKeyResponseSchema.typeName && m.data?.code !== undefined) {
    attributes["latchkey.verification.code"] = VerifyKeyCode[m.data.code];
  }
  return attributes;
}

/**
 * A refused or failed call's status and catalog code. Only a server fault (5xx) marks the
 * span as an error: a refusal is the server working. The error's message is not recorded,
 * since a detail may quote what the caller sent.
 */
function recordFailure(span: Span, door: string, err: unknown): void {
  if (!(err instanceof ServiceError)) {
    span.setStatus({ code: SpanStatusCode.ERROR });
    return;
  }
  span.setAttributes({
    "latchkey.status": err.entry.status,
    "latchkey.error.code": err.entry.code,
  });
  if (isGrpc(door)) span.setAttribute("rpc.grpc.status_code", err.code);
  if (err.entry.status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
}
