/**
 * What each error of the catalog means and how to fix it, by `<category>/<name>`: the text of
 * the page every error `type` URL leads to. A test checks that every catalog entry has one.
 */
export const explanations: Readonly<Record<string, { meaning: string; fix: string }>> = {
  "application/invalid_input": {
    meaning:
      "The request body does not match the procedure's contract: a field is missing, has the wrong type, or breaks a bound.",
    fix: "Read `errors[]` in the answer: each entry names the field as a JSON Pointer (`location`) and what is wrong. Correct those fields and send again.",
  },
  "application/assertion_failed": {
    meaning:
      "Latchkey found itself in a state it considers impossible and stopped rather than guess.",
    fix: "Nothing you sent was wrong. Retry once; if it persists, report it with the `requestId` of the answer.",
  },
  "application/unexpected_error": {
    meaning: "An unexpected failure inside Latchkey; nothing was changed by the request.",
    fix: "Retry with backoff. If it persists, report it with the `requestId` of the answer; the server log has the cause under the same id.",
  },
  "application/service_unavailable": {
    meaning:
      "A backing service (PostgreSQL, or Redis with RATELIMIT_FAILURE_MODE=closed) is unreachable, so Latchkey refuses to answer rather than make up a verdict.",
    fix: "Retry with backoff; the request did not take effect. Operators: check the database and Redis; Latchkey reconnects by itself.",
  },
  "application/protected_resource": {
    meaning: "The resource is protected and cannot be changed or deleted this way.",
    fix: "Use a resource you created, or lift the protection first.",
  },
  "application/precondition_failed": {
    meaning:
      "The request is valid but something it depends on is not set up: for example a rate limit named in keys.verifyKey that neither the key nor its identity has, or a feature this deployment does not support yet.",
    fix: "Read `detail`: it names what is missing. Configure it (for example add the rate limit to the key) or drop it from the request.",
  },
  "application/route_not_found": {
    meaning: "No procedure answers at this path.",
    fix: "Procedures are `POST /v2/<namespace>.<procedure>`, for example `/v2/keys.createKey`. Check the spelling and case against the API reference at `/docs`.",
  },
  "application/method_not_allowed": {
    meaning: "Procedures are called with POST (and `/v2/liveness` with GET).",
    fix: "Send the request with POST and a JSON body.",
  },
  "authentication/missing": {
    meaning: "The procedure needs a root key and the request has no Authorization header.",
    fix: "Send `Authorization: Bearer <ROOT_KEY>`. Root keys are created with `latchkey root-key create` or printed once at the first start.",
  },
  "authentication/malformed": {
    meaning: "The Authorization header is not of the form `Bearer <key>`.",
    fix: "Send exactly `Authorization: Bearer <ROOT_KEY>`, with one space and no quotes.",
  },
  "authentication/invalid_signature": {
    meaning:
      "A request to the secret-scanning receiver (`POST /v2/secret-scanning/github`) is not signed by a key this server trusts: a signature header is missing or malformed, the key identifier is not one of the configured public keys, or the signature does not match the body. Nothing was looked up or changed.",
    fix: "Only GitHub's secret-scanning partner programme sends these requests. Operators: check that `GITHUB_SECRET_SCANNING_PUBLIC_KEYS` holds GitHub's current keys (or the URL of their key list), and that nothing between GitHub and Latchkey rewrites the body.",
  },
  "authentication/key_not_found": {
    meaning:
      "The root key is unknown, revoked or expired (the answer does not say which, on purpose).",
    fix: "Use a current root key; `latchkey root-key list` shows them, `latchkey root-key create` makes a new one.",
  },
  "authorization/insufficient_permissions": {
    meaning: "The root key is valid but lacks the permission this call needs; `detail` names it.",
    fix: "Grant the named permission (for example `api.*.create_key`) to the root key, or use one that has it. docs/root-keys-and-cli.md lists the permission of every procedure.",
  },
  "authorization/forbidden": {
    meaning: "The caller may not do this, whatever its permissions.",
    fix: "Check which workspace the root key belongs to and that the resource is in it.",
  },
  "authorization/key_disabled": {
    meaning: "The root key is disabled.",
    fix: "Enable it again or use another root key.",
  },
  "authorization/workspace_disabled": {
    meaning: "The workspace of the root key is disabled.",
    fix: "Ask the operator to enable the workspace.",
  },
  "data/key_not_found": {
    meaning:
      "No key with this id exists in the root key's workspace (it may have been deleted, or belong to another workspace).",
    fix: "Check the `keyId`; `apis.listKeys` lists the keys of an API.",
  },
  "data/api_not_found": {
    meaning: "No API with this id exists in the root key's workspace, or it was deleted.",
    fix: "Check the `apiId`; create the API with `apis.createApi` first.",
  },
  "data/identity_not_found": {
    meaning: "No identity with this id or externalId exists in the workspace, or it was deleted.",
    fix: "Check the value; `identities.listIdentities` lists them, `identities.createIdentity` makes one.",
  },
  "data/permission_not_found": {
    meaning: "No permission with this id or slug exists in the workspace.",
    fix: "Check the value, or create the permission with `permissions.createPermission`.",
  },
  "data/role_not_found": {
    meaning: "No role with this id or name exists in the workspace.",
    fix: "Check the value, or create the role with `permissions.createRole`.",
  },
  "data/ratelimit_namespace_not_found": {
    meaning: "The rate-limit namespace does not exist (override procedures never create one).",
    fix: "Call `ratelimit.limit` once with the namespace to create it, or check its name or id.",
  },
  "data/ratelimit_override_not_found": {
    meaning: "No override matches this identifier in the namespace.",
    fix: "Set one with `ratelimit.setOverride`; `ratelimit.listOverrides` shows the existing ones.",
  },
  "data/migration_not_found": {
    meaning: "The migration named in the request does not exist.",
    fix: "Check the `migrationId`.",
  },
  "data/workspace_not_found": {
    meaning: "The root key points at a workspace that no longer exists.",
    fix: "Use a root key of an existing workspace.",
  },
  "data/audit_log_not_found": {
    meaning: "The audit record does not exist in the workspace.",
    fix: "Check the id; `analytics.listAuditLogs` lists the records.",
  },
  "data/identity_already_exists": {
    meaning: "An identity with this externalId already exists in the workspace.",
    fix: "Use `identities.getIdentity` or `identities.updateIdentity` on the existing one, or pick another externalId.",
  },
  "data/role_already_exists": {
    meaning: "A role with this name already exists in the workspace.",
    fix: "Use the existing role or pick another name.",
  },
  "data/permission_already_exists": {
    meaning: "A permission with this slug already exists in the workspace.",
    fix: "Use the existing permission or pick another slug.",
  },
  "data/webhook_endpoint_not_found": {
    meaning:
      "No webhook endpoint with this id exists in the root key's workspace (it was never made, belongs to another workspace, or was deleted).",
    fix: "Use an `id` that webhooks.listEndpoints answers, with a root key of the same workspace.",
  },
  "data/webhook_delivery_not_found": {
    meaning:
      "The endpoint has no delivery with this id: it was made for another endpoint, or removed by the retention of deliveries.",
    fix: "Use an `id` that webhooks.listDeliveries answers for the same endpoint.",
  },
  "data/reservation_not_found": {
    meaning:
      "No credit reservation with this id exists in the root key's workspace (it was never made, belongs to another workspace, or was removed a day after it was settled).",
    fix: "Settle the reservationId that keys.verifyKey answered when it was called with credits.reserve, with a root key of the same workspace.",
  },
  "data/idempotency_key_reused": {
    meaning:
      "This idempotencyKey was used in the workspace within the last 24 hours for a request with another body; the first request's outcome stands and this one was not carried out.",
    fix: "Send a repeat with exactly the body of the first request, or use a new idempotencyKey for a new request.",
  },
  "data/ratelimit_namespace_gone": {
    meaning: "The rate-limit namespace was deleted.",
    fix: "Use another namespace name.",
  },
  "data/analytics_not_configured": {
    meaning: "Analytics is not available for this workspace.",
    fix: "Ask the operator to enable analytics.",
  },
  "data/analytics_connection_failed": {
    meaning: "The analytics store could not be reached.",
    fix: "Retry with backoff.",
  },
  "bad_request/permissions_query_syntax_error": {
    meaning: "The `permissions` query of keys.verifyKey could not be parsed; `detail` says where.",
    fix: "Write permission names joined by AND / OR with parentheses, for example `documents.read AND (documents.write OR admin)`.",
  },
  "bad_request/request_body_unreadable": {
    meaning: "The body is not valid JSON (or could not be read).",
    fix: "Send a JSON object (or the documented array) with `Content-Type: application/json`.",
  },
  "bad_request/invalid_analytics_query": {
    meaning:
      "The analytics query is not valid SQL or uses something outside the allow-list (a type, an operator, parameters, Unicode escapes, locking clauses); `detail` names it.",
    fix: "Write one SELECT in PostgreSQL's dialect over the documented tables; docs/analytics.md lists what is allowed.",
  },
  "bad_request/invalid_analytics_table": {
    meaning:
      "The analytics query reads a table that is not one of the virtual tables (or a raw table on the embedded database).",
    fix: "Query key_verifications_v1, key_verifications_per_{minute,hour,day,month}_v1 or ratelimits_v1.",
  },
  "bad_request/invalid_analytics_function": {
    meaning: "The analytics query calls a function outside the allow-list; `detail` names it.",
    fix: "Use an allowed function (docs/analytics.md lists them); ClickHouse functions have PostgreSQL equivalents, for example `date_trunc('day', time)` for `toStartOfDay(time)`.",
  },
  "bad_request/invalid_analytics_query_type": {
    meaning:
      "Only one SELECT is allowed: no writes, no DDL, no several statements, no CTE that writes.",
    fix: "Send a single SELECT statement.",
  },
  "bad_request/query_range_exceeds_retention": {
    meaning: "The query asks for data older than the retention.",
    fix: "Narrow the time range to the retention window (EVENT_RETENTION_DAYS).",
  },
  "bad_request/request_timeout": {
    meaning: "The request took too long to arrive or to process.",
    fix: "Retry; send the body promptly.",
  },
  "bad_request/client_closed_request": {
    meaning: "The client went away before the answer was ready.",
    fix: "Nothing to fix on the server; retry if the answer is still needed.",
  },
  "bad_request/request_body_too_large": {
    meaning: "The body is larger than the server accepts (1 MiB).",
    fix: "Send a smaller body; split batches (for example keys.migrateKeys takes at most 100 keys).",
  },
  "bad_request/unsupported_media_type": {
    meaning: "The body is not declared as JSON.",
    fix: "Send `Content-Type: application/json`.",
  },
  "unprocessable_entity/query_execution_timeout": {
    meaning: "The analytics query ran longer than ANALYTICS_TIMEOUT_MS and was stopped.",
    fix: "Narrow the time range, filter by API or key, or read a rollup table instead of key_verifications_v1.",
  },
  "unprocessable_entity/query_memory_limit_exceeded": {
    meaning: "The analytics query's result is too large to return.",
    fix: "Select fewer columns or rows, or aggregate.",
  },
  "unprocessable_entity/query_rows_limit_exceeded": {
    meaning: "The analytics query returns more rows than ANALYTICS_MAX_ROWS.",
    fix: "Aggregate, filter, or add a LIMIT.",
  },
  "too_many_requests/query_quota_exceeded": {
    meaning: "Too many analytics queries in a short time.",
    fix: "Retry later with backoff.",
  },
  "too_many_requests/sign_in_rate_limited": {
    meaning:
      "Too many console sign-in attempts came from your address this minute (or from all addresses together); the root key was not read.",
    fix: "Wait for the time `Retry-After` gives, then sign in again with the right root key.",
  },
  "too_many_requests/workspace_rate_limited": {
    meaning: "The workspace sent more requests than it may.",
    fix: "Retry later with backoff.",
  },
};
