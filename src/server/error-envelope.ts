import type { ServiceError } from "../errors/service-error.js";

/**
 * The /v2 error envelope: `{meta: {requestId}, error: {detail, status, title, type}}`,
 * plus `errors: [{location, message}]` on 400 and 413 (the public SDK requires the
 * array on those statuses, even when empty).
 */
export function errorEnvelope(err: ServiceError, requestId: string, type: string): unknown {
  const status = err.entry.status;
  const error: Record<string, unknown> = {
    detail: err.detail,
    status,
    title: err.entry.title,
    type,
  };
  if (status === 400 || status === 413) {
    error.errors = err.violations.map((v) =>
      v.fix === undefined ? { location: v.location, message: v.message } : { ...v },
    );
  }
  return { meta: { requestId }, error };
}
