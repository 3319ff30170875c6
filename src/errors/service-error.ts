import { ConnectError } from "@connectrpc/connect";
import { MAX_VIOLATIONS } from "../domain/field-rules.js";
import { type CatalogEntry, catalog } from "./catalog.js";

/** One field that failed validation: a JSON Pointer into the request and a message. */
export interface Violation {
  readonly location: string;
  readonly message: string;
  readonly fix?: string;
}

/**
 * An error from the catalog. It is a ConnectError, so Connect and gRPC callers get the
 * catalog's code; the request-context interceptor attaches the typed ErrorDetail and
 * the /v2 door renders the envelope from the same fields. `message` is public;
 * `cause` stays internal and is only logged.
 */
export class ServiceError extends ConnectError {
  // ConnectError recognises its instances by name ("ConnectError", kept as is) and
  // overrides instanceof; restore the ordinary prototype check for this subclass.
  static override [Symbol.hasInstance](v: unknown): boolean {
    return Function.prototype[Symbol.hasInstance].call(ServiceError, v);
  }

  constructor(
    readonly entry: CatalogEntry,
    readonly detail: string,
    readonly violations: readonly Violation[] = [],
    cause?: unknown,
  ) {
    super(detail, entry.connectCode, undefined, undefined, cause);
  }
}

/** Factories over the catalog, one per error a procedure raises. */
export const errors = {
  /** At most MAX_VIOLATIONS are listed; the detail says when more were left out. */
  invalidInput(violations: readonly Violation[], detail?: string): ServiceError {
    const first = violations[0];
    const listed = violations.slice(0, MAX_VIOLATIONS);
    const more =
      violations.length > MAX_VIOLATIONS
        ? ` (and more: only the first ${MAX_VIOLATIONS} problems are listed)`
        : violations.length > 1
          ? ` (and ${violations.length - 1} more)`
          : "";
    const text =
      detail ??
      (first ? `${first.location || "body"}: ${first.message}${more}` : "The request is invalid.");
    return new ServiceError(catalog.invalidInput, text, listed);
  },
  badField(location: string, message: string): ServiceError {
    return errors.invalidInput([{ location, message }]);
  },
  authenticationMissing(): ServiceError {
    return new ServiceError(
      catalog.authenticationMissing,
      "Authorization header is missing: send 'Authorization: Bearer <ROOT_KEY>'.",
    );
  },
  /** A gateway authorization request without the gateway's root key; `how` says how to send it. */
  gatewayRootKeyMissing(how: string): ServiceError {
    return new ServiceError(
      catalog.authenticationMissing,
      `The gateway sent no root key: ${how}. It needs one holding api.<apiId>.verify_key.`,
    );
  },
  /** A verification that names no tenant on an instance of several workspaces. */
  verificationUnscoped(): ServiceError {
    return new ServiceError(
      catalog.authenticationMissing,
      "This instance serves several workspaces: send a root key ('Authorization: Bearer <ROOT_KEY>') or the 'apiId' of the API whose keys you verify.",
    );
  },
  authenticationMalformed(): ServiceError {
    return new ServiceError(
      catalog.authenticationMalformed,
      "Authorization header is malformed: it must be 'Bearer <ROOT_KEY>'.",
    );
  },
  rootKeyNotFound(): ServiceError {
    return new ServiceError(
      catalog.rootKeyNotFound,
      "The provided root key is invalid: it is unknown, revoked or expired.",
    );
  },
  /** A secret-scanning report whose signature is missing, unknown or wrong; `why` says which. */
  signatureInvalid(why: string): ServiceError {
    return new ServiceError(
      catalog.signatureInvalid,
      `The request signature is not valid: ${why}.`,
    );
  },
  /** A console session that is unknown, idle too long, past its lifetime or whose key went. */
  consoleSessionEnded(): ServiceError {
    return new ServiceError(
      catalog.rootKeyNotFound,
      "The console session has ended (signed out, expired, or its root key was revoked): sign in again.",
    );
  },
  /** A call with a console session cookie but without the session's CSRF header. */
  consoleCsrfMissing(): ServiceError {
    return new ServiceError(
      catalog.authenticationMalformed,
      "A call made with a console session must carry the session's X-Latchkey-Csrf header.",
    );
  },
  signInRateLimited(): ServiceError {
    return new ServiceError(
      catalog.signInRateLimited,
      "Too many sign-in attempts from this address: wait a minute and try again.",
    );
  },
  insufficientPermissions(required: string): ServiceError {
    return new ServiceError(catalog.insufficientPermissions, `Missing permission: '${required}'.`);
  },
  apiNotFound(): ServiceError {
    return new ServiceError(
      catalog.apiNotFound,
      "The requested API does not exist or has been deleted.",
    );
  },
  identityNotFound(): ServiceError {
    return new ServiceError(catalog.identityNotFound, "This identity does not exist.");
  },
  identityAlreadyExists(externalId: string): ServiceError {
    return new ServiceError(
      catalog.identityAlreadyExists,
      `Identity with externalId '${externalId}' already exists in this workspace.`,
    );
  },
  permissionNotFound(name?: string): ServiceError {
    return new ServiceError(
      catalog.permissionNotFound,
      name === undefined
        ? "The requested permission does not exist."
        : `Permission '${name}' was not found.`,
    );
  },
  permissionAlreadyExists(slug: string): ServiceError {
    return new ServiceError(
      catalog.permissionAlreadyExists,
      `A permission with slug '${slug}' already exists in this workspace.`,
    );
  },
  roleNotFound(name?: string): ServiceError {
    return new ServiceError(
      catalog.roleNotFound,
      name === undefined ? "The requested role does not exist." : `Role '${name}' was not found.`,
    );
  },
  roleAlreadyExists(name: string): ServiceError {
    return new ServiceError(
      catalog.roleAlreadyExists,
      `A role with name '${name}' already exists in this workspace.`,
    );
  },
  /** A repeat of an idempotency key with a request body other than the first one's. */
  idempotencyKeyReused(): ServiceError {
    return new ServiceError(
      catalog.idempotencyKeyReused,
      "This idempotencyKey was already used in this workspace within 24 hours with another request body; repeat the first request's body exactly, or use a new idempotencyKey.",
    );
  },
  reservationNotFound(): ServiceError {
    return new ServiceError(
      catalog.reservationNotFound,
      "The specified credit reservation was not found.",
    );
  },
  /** No webhook endpoint with this id in the caller's workspace. */
  webhookEndpointNotFound(): ServiceError {
    return new ServiceError(
      catalog.webhookEndpointNotFound,
      "This webhook endpoint does not exist.",
    );
  },
  /** No delivery with this id to the endpoint named. */
  webhookDeliveryNotFound(): ServiceError {
    return new ServiceError(
      catalog.webhookDeliveryNotFound,
      "This endpoint has no delivery with this id (deliveries are kept for a limited time).",
    );
  },
  keyNotFound(): ServiceError {
    return new ServiceError(catalog.keyNotFound, "The specified key was not found.");
  },
  permissionsQuerySyntax(message: string, position: number): ServiceError {
    return new ServiceError(catalog.permissionsQuerySyntaxError, message, [
      { location: "/permissions", message: `syntax error at position ${position}: ${message}` },
    ]);
  },
  namespaceNotFound(): ServiceError {
    return new ServiceError(catalog.ratelimitNamespaceNotFound, "This namespace does not exist.");
  },
  namespaceGone(): ServiceError {
    return new ServiceError(catalog.ratelimitNamespaceGone, "This namespace has been deleted.");
  },
  overrideNotFound(): ServiceError {
    return new ServiceError(catalog.ratelimitOverrideNotFound, "This override does not exist.");
  },
  preconditionFailed(detail: string): ServiceError {
    return new ServiceError(catalog.preconditionFailed, detail);
  },
  serviceUnavailable(cause?: unknown): ServiceError {
    return new ServiceError(
      catalog.serviceUnavailable,
      "A backing service is unavailable; retry the request shortly.",
      [],
      cause,
    );
  },
  unexpected(cause?: unknown): ServiceError {
    return new ServiceError(
      catalog.unexpectedError,
      "An unexpected error occurred; quote the request id to support.",
      [],
      cause,
    );
  },
  routeNotFound(path: string): ServiceError {
    return new ServiceError(
      catalog.routeNotFound,
      `No procedure is served at '${path}'. Procedures are POST /v2/<service>.<procedure>.`,
    );
  },
  methodNotAllowed(method: string): ServiceError {
    return new ServiceError(
      catalog.methodNotAllowed,
      `Method ${method} is not allowed: every procedure is called with POST.`,
    );
  },
  unsupportedMediaType(contentType: string | undefined): ServiceError {
    return new ServiceError(
      catalog.unsupportedMediaType,
      `Content-Type '${contentType ?? ""}' is not supported: send 'application/json'.`,
    );
  },
  bodyTooLarge(limitBytes: number): ServiceError {
    return new ServiceError(
      catalog.requestBodyTooLarge,
      `The request body exceeds the maximum allowed size of ${limitBytes} bytes.`,
    );
  },
  clientClosed(): ServiceError {
    return new ServiceError(catalog.clientClosedRequest, "The client closed the request.");
  },
  timeout(): ServiceError {
    return new ServiceError(catalog.requestTimeout, "The request took too long to process.");
  },
  bodyUnreadable(reason: string): ServiceError {
    return new ServiceError(
      catalog.requestBodyUnreadable,
      `The request body could not be read: ${reason}`,
    );
  },
  analyticsQueryRefused(
    kind: "query" | "query_type" | "table" | "function",
    message: string,
  ): ServiceError {
    const entry = {
      query: catalog.invalidAnalyticsQuery,
      query_type: catalog.invalidAnalyticsQueryType,
      table: catalog.invalidAnalyticsTable,
      function: catalog.invalidAnalyticsFunction,
    }[kind];
    return new ServiceError(entry, message, [{ location: "/query", message }]);
  },
  queryTimeout(timeoutMs: number): ServiceError {
    return new ServiceError(
      catalog.queryExecutionTimeout,
      `The query ran longer than ${timeoutMs} ms; narrow its time range or use a rollup table.`,
    );
  },
  queryRowsLimit(maxRows: number): ServiceError {
    return new ServiceError(
      catalog.queryRowsLimitExceeded,
      `The query returns more than ${maxRows} rows; aggregate it or add a LIMIT.`,
    );
  },
  queryResultTooLarge(maxBytes: number): ServiceError {
    return new ServiceError(
      catalog.queryMemoryLimitExceeded,
      `The query's result is larger than ${maxBytes} bytes; select fewer columns or rows.`,
    );
  },
} as const;
