import type { MessageInitShape } from "@bufbuild/protobuf";
import {
  VerifyKeyCode,
  type VerifyKeyResponseDataSchema,
} from "../../../gen/latchkey/v2/keys_pb.js";
import {
  type LimitWindow,
  rateLimitFields,
  retryAfterSeconds,
} from "../../domain/ratelimit-headers.js";
import type { ServiceError } from "../../errors/service-error.js";
import { errorEnvelope } from "../error-envelope.js";

type Data = MessageInitShape<typeof VerifyKeyResponseDataSchema>;

/**
 * What a gateway is told: the status to answer with (200 lets the request through), the
 * headers to pass upstream with an allowed request, the headers for the client, and the JSON
 * body of a refusal. The HTTP door sends both header sets with its answer (the gateway's
 * configuration picks them); Envoy's gRPC door puts each where Envoy expects it.
 */
export interface GatewayAnswer {
  status: number;
  /** For the upstream request, when allowed: the key, its identity, its metadata. */
  upstream: Record<string, string>;
  /** The `x-latchkey-*` upstream headers this answer leaves out, for a gateway to strip. */
  absent: string[];
  /** For the client: rate-limit fields, Retry-After, WWW-Authenticate, the request id. */
  client: Record<string, string>;
  /** The JSON body of a refusal ("" when allowed). */
  body: string;
}

/** An outcome of the gateway's own, beyond the verification's: no key in the request. */
export type GatewayCode = keyof typeof VerifyKeyCode | "KEY_MISSING";

/** The most characters of `X-Latchkey-Meta`; a larger metadata is left out (see metaHeaders). */
export const MAX_META_HEADER = 2048;

/** The upstream headers an answer may carry. */
export const UPSTREAM_HEADERS = [
  "x-latchkey-key-id",
  "x-latchkey-identity",
  "x-latchkey-meta",
  "x-latchkey-meta-omitted",
] as const;

/** The HTTP status of each outcome, with a sentence for the refused client. */
const OUTCOMES: Record<Exclude<GatewayCode, "UNSPECIFIED" | "VALID">, [number, string]> = {
  KEY_MISSING: [401, "No API key was sent."],
  NOT_FOUND: [401, "The API key is not valid."],
  DISABLED: [401, "The API key is disabled."],
  EXPIRED: [401, "The API key has expired."],
  INSUFFICIENT_PERMISSIONS: [403, "The API key lacks a permission this request needs."],
  FORBIDDEN: [403, "The API key may not be used from this network address."],
  RATE_LIMITED: [429, "A rate limit of the API key is exhausted."],
  USAGE_EXCEEDED: [429, "The API key has no credits left for this request."],
};

const TITLES: Record<number, string> = {
  401: "Unauthorized",
  403: "Forbidden",
  429: "Too Many Requests",
};

/** The limits of a verification answer, in the terms of the header fields. */
function windowsOf(data: Data): LimitWindow[] {
  return (data.ratelimits ?? []).map((r) => ({
    name: r.name ?? "",
    limit: Number(r.limit ?? 0),
    durationMs: Number(r.duration ?? 0),
    remaining: Number(r.remaining ?? 0),
    resetMs: Number(r.reset ?? 0),
    exceeded: r.exceeded ?? false,
  }));
}

/**
 * The metadata of the key for the upstream: `X-Latchkey-Meta`, base64url (no padding) of its
 * JSON, when it has any. A metadata longer than MAX_META_HEADER once encoded is left out
 * rather than refused (a key is not refused for what it carries, and proxies bound the header
 * sizes they read), and `X-Latchkey-Meta-Omitted: too-large` says so.
 */
function metaHeaders(data: Data, upstream: Record<string, string>): void {
  const meta = data.meta as Record<string, unknown> | undefined;
  if (!meta || Object.keys(meta).length === 0) return;
  const encoded = Buffer.from(JSON.stringify(meta)).toString("base64url");
  if (encoded.length <= MAX_META_HEADER) upstream["x-latchkey-meta"] = encoded;
  else upstream["x-latchkey-meta-omitted"] = "too-large";
}

/** The client headers of the limits a verification evaluated, and Retry-After when refused. */
function limitHeaders(data: Data, code: GatewayCode, now: number, client: Record<string, string>) {
  const windows = windowsOf(data);
  const fields = rateLimitFields(windows, now);
  if (fields) {
    client["ratelimit-policy"] = fields.policy;
    client.ratelimit = fields.current;
  }
  if (code === "RATE_LIMITED") {
    const after = retryAfterSeconds(windows, now);
    if (after !== undefined) client["retry-after"] = String(after);
  }
}

function absentOf(upstream: Record<string, string>): string[] {
  return UPSTREAM_HEADERS.filter((h) => !(h in upstream));
}

/**
 * The answer for a verification's outcome: VALID is 200 with the upstream headers; a key
 * missing, unknown, disabled or expired is 401; a permission or network refusal 403; a rate
 * limit or credits refusal 429. Every answer carries the rate-limit fields of the limits the
 * verification evaluated, and `X-Latchkey-Code` names the outcome.
 */
export function outcomeAnswer(
  data: Data | undefined,
  code: GatewayCode,
  requestId: string,
  now: number,
): GatewayAnswer {
  const client: Record<string, string> = { "x-request-id": requestId, "x-latchkey-code": code };
  const upstream: Record<string, string> = {};
  if (data) limitHeaders(data, code, now, client);
  if (code === "VALID" && data) {
    upstream["x-latchkey-key-id"] = data.keyId ?? "";
    const externalId = data.identity?.externalId;
    if (externalId) upstream["x-latchkey-identity"] = externalId;
    metaHeaders(data, upstream);
    return { status: 200, upstream, absent: absentOf(upstream), client, body: "" };
  }
  const [status, detail] = OUTCOMES[code as keyof typeof OUTCOMES] ?? [401, "Refused."];
  if (status === 401) client["www-authenticate"] = 'Bearer realm="latchkey"';
  const body = JSON.stringify({
    meta: { requestId },
    error: { status, title: TITLES[status], code, detail },
  });
  return { status, upstream, absent: [...UPSTREAM_HEADERS], client, body };
}

/**
 * The answer for a refusal of the call itself (a missing or unknown root key 401, a malformed
 * policy header 400, a root key without the grant 403, a requested limit not configured 412,
 * the database down 503): the error envelope of the /v2 door, with its catalog type.
 */
export function errorAnswer(err: ServiceError, requestId: string, type: string): GatewayAnswer {
  return {
    status: err.entry.status,
    upstream: {},
    absent: [...UPSTREAM_HEADERS],
    client: { "x-request-id": requestId },
    body: JSON.stringify(errorEnvelope(err, requestId, type)),
  };
}

/** The outcome's name, from the verification's code. */
export function codeOf(data: Data | undefined): GatewayCode {
  const code = data?.code ?? VerifyKeyCode.UNSPECIFIED;
  return VerifyKeyCode[code] as GatewayCode;
}
