import { Code } from "@connectrpc/connect";

/** One entry of the error catalog: what a client sees for `err:svc:<category>:<name>`. */
export interface CatalogEntry {
  /** The full code, `err:svc:<category>:<name>`. */
  readonly code: string;
  readonly category: string;
  readonly name: string;
  /** HTTP status on the /v2 JSON door. */
  readonly status: number;
  /** The standard HTTP reason phrase of `status` (RFC 9110). */
  readonly title: string;
  /** The Connect / gRPC code for Connect, gRPC-web and gRPC callers. */
  readonly connectCode: Code;
}

const TITLES: Record<number, string> = {
  400: "Bad Request",
  401: "Unauthorized",
  403: "Forbidden",
  404: "Not Found",
  405: "Method Not Allowed",
  408: "Request Timeout",
  409: "Conflict",
  410: "Gone",
  412: "Precondition Failed",
  413: "Content Too Large",
  415: "Unsupported Media Type",
  422: "Unprocessable Content",
  429: "Too Many Requests",
  499: "Client Closed Request",
  500: "Internal Server Error",
  503: "Service Unavailable",
};

function entry(category: string, name: string, status: number, connectCode: Code): CatalogEntry {
  const title = TITLES[status];
  if (title === undefined) throw new TypeError(`no title for status ${status}`);
  return { code: `err:svc:${category}:${name}`, category, name, status, title, connectCode };
}

/**
 * The closed catalog of every error Latchkey can return: the public system's codes
 * (the public system's codes, its `unkey`/`user` segments folded into `svc`) with
 * Latchkey's own overrides, plus the transport errors of the /v2 door.
 */
export const catalog = {
  invalidInput: entry("application", "invalid_input", 400, Code.InvalidArgument),
  assertionFailed: entry("application", "assertion_failed", 500, Code.Internal),
  unexpectedError: entry("application", "unexpected_error", 500, Code.Internal),
  serviceUnavailable: entry("application", "service_unavailable", 503, Code.Unavailable),
  protectedResource: entry("application", "protected_resource", 412, Code.FailedPrecondition),
  preconditionFailed: entry("application", "precondition_failed", 412, Code.FailedPrecondition),
  routeNotFound: entry("application", "route_not_found", 404, Code.NotFound),
  methodNotAllowed: entry("application", "method_not_allowed", 405, Code.Unimplemented),

  authenticationMissing: entry("authentication", "missing", 401, Code.Unauthenticated),
  authenticationMalformed: entry("authentication", "malformed", 401, Code.Unauthenticated),
  rootKeyNotFound: entry("authentication", "key_not_found", 401, Code.Unauthenticated),
  signatureInvalid: entry("authentication", "invalid_signature", 401, Code.Unauthenticated),

  insufficientPermissions: entry(
    "authorization",
    "insufficient_permissions",
    403,
    Code.PermissionDenied,
  ),
  forbidden: entry("authorization", "forbidden", 403, Code.PermissionDenied),
  keyDisabled: entry("authorization", "key_disabled", 403, Code.PermissionDenied),
  workspaceDisabled: entry("authorization", "workspace_disabled", 403, Code.PermissionDenied),

  keyNotFound: entry("data", "key_not_found", 404, Code.NotFound),
  apiNotFound: entry("data", "api_not_found", 404, Code.NotFound),
  identityNotFound: entry("data", "identity_not_found", 404, Code.NotFound),
  permissionNotFound: entry("data", "permission_not_found", 404, Code.NotFound),
  roleNotFound: entry("data", "role_not_found", 404, Code.NotFound),
  ratelimitNamespaceNotFound: entry("data", "ratelimit_namespace_not_found", 404, Code.NotFound),
  ratelimitOverrideNotFound: entry("data", "ratelimit_override_not_found", 404, Code.NotFound),
  migrationNotFound: entry("data", "migration_not_found", 404, Code.NotFound),
  workspaceNotFound: entry("data", "workspace_not_found", 404, Code.NotFound),
  auditLogNotFound: entry("data", "audit_log_not_found", 404, Code.NotFound),
  reservationNotFound: entry("data", "reservation_not_found", 404, Code.NotFound),
  webhookEndpointNotFound: entry("data", "webhook_endpoint_not_found", 404, Code.NotFound),
  webhookDeliveryNotFound: entry("data", "webhook_delivery_not_found", 404, Code.NotFound),
  identityAlreadyExists: entry("data", "identity_already_exists", 409, Code.AlreadyExists),
  roleAlreadyExists: entry("data", "role_already_exists", 409, Code.AlreadyExists),
  permissionAlreadyExists: entry("data", "permission_already_exists", 409, Code.AlreadyExists),
  idempotencyKeyReused: entry("data", "idempotency_key_reused", 409, Code.AlreadyExists),
  ratelimitNamespaceGone: entry("data", "ratelimit_namespace_gone", 410, Code.FailedPrecondition),
  analyticsNotConfigured: entry("data", "analytics_not_configured", 412, Code.FailedPrecondition),
  analyticsConnectionFailed: entry("data", "analytics_connection_failed", 503, Code.Unavailable),

  permissionsQuerySyntaxError: entry(
    "bad_request",
    "permissions_query_syntax_error",
    400,
    Code.InvalidArgument,
  ),
  requestBodyUnreadable: entry("bad_request", "request_body_unreadable", 400, Code.InvalidArgument),
  invalidAnalyticsQuery: entry("bad_request", "invalid_analytics_query", 400, Code.InvalidArgument),
  invalidAnalyticsTable: entry("bad_request", "invalid_analytics_table", 400, Code.InvalidArgument),
  invalidAnalyticsFunction: entry(
    "bad_request",
    "invalid_analytics_function",
    400,
    Code.InvalidArgument,
  ),
  invalidAnalyticsQueryType: entry(
    "bad_request",
    "invalid_analytics_query_type",
    400,
    Code.InvalidArgument,
  ),
  queryRangeExceedsRetention: entry(
    "bad_request",
    "query_range_exceeds_retention",
    400,
    Code.InvalidArgument,
  ),
  requestTimeout: entry("bad_request", "request_timeout", 408, Code.DeadlineExceeded),
  clientClosedRequest: entry("bad_request", "client_closed_request", 499, Code.Canceled),
  requestBodyTooLarge: entry("bad_request", "request_body_too_large", 413, Code.ResourceExhausted),
  unsupportedMediaType: entry("bad_request", "unsupported_media_type", 415, Code.InvalidArgument),

  queryExecutionTimeout: entry(
    "unprocessable_entity",
    "query_execution_timeout",
    422,
    Code.ResourceExhausted,
  ),
  queryMemoryLimitExceeded: entry(
    "unprocessable_entity",
    "query_memory_limit_exceeded",
    422,
    Code.ResourceExhausted,
  ),
  queryRowsLimitExceeded: entry(
    "unprocessable_entity",
    "query_rows_limit_exceeded",
    422,
    Code.ResourceExhausted,
  ),
  queryQuotaExceeded: entry(
    "too_many_requests",
    "query_quota_exceeded",
    429,
    Code.ResourceExhausted,
  ),
  signInRateLimited: entry(
    "too_many_requests",
    "sign_in_rate_limited",
    429,
    Code.ResourceExhausted,
  ),
  workspaceRateLimited: entry(
    "too_many_requests",
    "workspace_rate_limited",
    429,
    Code.ResourceExhausted,
  ),
} as const satisfies Record<string, CatalogEntry>;

/** Every catalog entry, for documentation and tests. */
export const catalogEntries: readonly CatalogEntry[] = Object.values(catalog);

/** The documentation URL of an entry: `${docsUrl}/api-reference/errors-v2/svc/<category>/<name>`. */
export function errorTypeUrl(docsUrl: string, e: CatalogEntry): string {
  return `${docsUrl}/api-reference/errors-v2/svc/${e.category}/${e.name}`;
}
