import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";
import {
  ErrorDetailSchema,
  type ResponseMeta,
  ResponseMetaSchema,
} from "../../../gen/latchkey/v2/common_pb.js";
import { catalog, errorTypeUrl } from "../../errors/catalog.js";
import { errors, ServiceError } from "../../errors/service-error.js";
import type { Logger } from "../../log.js";
import type { Metrics } from "../../metrics.js";
import { callOf } from "../../services/call.js";
import { procedureOf } from "../../services/procedures.js";
import { isUnavailable } from "../../storage/db.js";

/**
 * Thrown by a door when the request itself failed to arrive: the client reset or closed
 * its connection mid-request. Node reports that as ECONNRESET, the same code a database
 * connection reset carries, so the door says where it came from.
 */
export class ClientGoneError extends Error {
  override name = "ClientGoneError";
}

/** The 500s whose cause is logged already: a door may convert what its interceptor threw. */
const loggedFaults = new WeakSet<ServiceError>();

/** Logs a 500 with its cause, once, and returns it. */
function logFault(e: ServiceError, cause: unknown, log: Logger, requestId: string): ServiceError {
  if (loggedFaults.has(e)) return e;
  loggedFaults.add(e);
  log.error({ requestId, err: cause }, "unexpected error");
  return e;
}

/**
 * Turns anything a procedure throws into a catalog error: ServiceErrors pass through,
 * a client that went away is 499 and logged at debug (it is not a fault), an unreachable
 * database becomes 503, anything else becomes 500. A 500, thrown as `errors.unexpected(cause)`
 * or as anything else, is logged once with its cause (the client sees only the request id).
 */
export function toServiceError(err: unknown, log: Logger, requestId: string): ServiceError {
  if (err instanceof ServiceError) {
    if (err.entry !== catalog.unexpectedError) return err;
    return logFault(err, err.cause ?? err, log, requestId);
  }
  if (
    err instanceof ClientGoneError ||
    (err instanceof ConnectError && err.code === Code.Canceled)
  ) {
    log.debug({ requestId }, "client closed the connection");
    return errors.clientClosed();
  }
  if (isUnavailable(err)) {
    log.warn({ requestId, err }, "backing service unavailable");
    return errors.serviceUnavailable(err);
  }
  if (err instanceof ConnectError && err.code === Code.DeadlineExceeded) return errors.timeout();
  return logFault(errors.unexpected(err), err, log, requestId);
}

/**
 * The `type` URL of an error: under the configured DOCS_URL, else the relative reference
 * `/api-reference/errors-v2/...`, which a client resolves against the URL it called (this
 * server's error pages). Never built from the request: a Host header is the caller's to write.
 */
export function errorType(docsUrl: string | undefined, e: ServiceError): string {
  return errorTypeUrl(docsUrl ?? "", e.entry);
}

/**
 * The outermost interceptor of every door: stamps the request id on the response
 * (`meta.requestId` and the `x-request-id` header), turns failures into catalog errors
 * carrying a typed ErrorDetail, and records metrics and a log line per call.
 */
export function requestContextInterceptor(
  log: Logger,
  metrics: Metrics,
  docsUrl: string | undefined,
): Interceptor {
  return (next) => async (req) => {
    const call = callOf(req.contextValues);
    const { name } = procedureOf(req.method);
    const started = performance.now();
    try {
      const res = await next(req);
      if (!res.stream && req.method.output.field.meta) {
        // The message create() would make, without its walk over the schema's fields.
        const meta: ResponseMeta = {
          $typeName: ResponseMetaSchema.typeName,
          requestId: call.requestId,
        };
        (res.message as { meta?: unknown }).meta = meta;
      }
      res.header.set("x-request-id", call.requestId);
      const seconds = (performance.now() - started) / 1000;
      metrics.observe(name, call.door, 200, seconds);
      // The line's object is only made when it is written: this runs on every call.
      if (log.isLevelEnabled("debug")) {
        log.debug(
          {
            requestId: call.requestId,
            procedure: name,
            door: call.door,
            status: 200,
            ms: seconds * 1000,
          },
          "call",
        );
      }
      return res;
    } catch (thrown) {
      const err = toServiceError(thrown, log, call.requestId);
      if (err.details.length === 0) {
        err.details.push({
          desc: ErrorDetailSchema,
          value: {
            code: err.entry.code,
            status: err.entry.status,
            title: err.entry.title,
            type: errorType(docsUrl, err),
            detail: err.detail,
            errors: err.violations.map((v) => ({ ...v })),
            requestId: call.requestId,
          },
        });
      }
      err.metadata.set("x-request-id", call.requestId);
      const seconds = (performance.now() - started) / 1000;
      metrics.observe(name, call.door, err.entry.status, seconds);
      log.debug(
        {
          requestId: call.requestId,
          procedure: name,
          door: call.door,
          status: err.entry.status,
          code: err.entry.code,
          ms: seconds * 1000,
        },
        "call failed",
      );
      throw err;
    }
  };
}
