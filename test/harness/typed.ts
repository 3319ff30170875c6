import { Code, ConnectError, createClient, type Transport } from "@connectrpc/connect";
import type { LatchkeyClient } from "@latchkey/client";
import { expect } from "vitest";
import { AnalyticsService } from "../../gen/latchkey/v2/analytics_pb.js";
import { ApisService } from "../../gen/latchkey/v2/apis_pb.js";
import { ErrorDetailSchema } from "../../gen/latchkey/v2/common_pb.js";
import { IdentitiesService } from "../../gen/latchkey/v2/identities_pb.js";
import { KeysService } from "../../gen/latchkey/v2/keys_pb.js";
import { LivenessService } from "../../gen/latchkey/v2/liveness_pb.js";
import { PermissionsService } from "../../gen/latchkey/v2/permissions_pb.js";
import { RatelimitService } from "../../gen/latchkey/v2/ratelimit_pb.js";
import { WebhooksService } from "../../gen/latchkey/v2/webhooks_pb.js";

/**
 * Typed clients of every service, the shape the package's own client has: a procedure's
 * behaviour is written once through these (`await api.keys.createKey({ apiId })`), and the
 * door conformance suite shows that the other doors answer the same. The harness builds them
 * over one shared transport per server (`s.as(key)` is called per test, often), with any
 * Authorization header a test needs, which the package's client has no reason to offer.
 */
export type Api = LatchkeyClient;

/** How a typed call authenticates: a root key, none, or a raw Authorization header value. */
export type TypedAuth = string | null | { header: string };

/** A transport that sends every call with this Authorization header (or none). */
function authenticated(base: Transport, auth: TypedAuth): Transport {
  const value =
    auth === null ? undefined : typeof auth === "string" ? `Bearer ${auth}` : auth.header;
  const withAuth = (header: ConstructorParameters<typeof Headers>[0]) => {
    const h = new Headers(header);
    if (value === undefined) h.delete("authorization");
    else h.set("authorization", value);
    return h;
  };
  return {
    unary: (method, signal, timeoutMs, header, input, values) =>
      base.unary(method, signal, timeoutMs, withAuth(header), input, values),
    stream: (method, signal, timeoutMs, header, input, values) =>
      base.stream(method, signal, timeoutMs, withAuth(header), input, values),
  };
}

/** Typed clients of every service over one transport, authenticated as `auth`. */
export function typedApi(base: Transport, auth: TypedAuth): Api {
  const t = authenticated(base, auth);
  return {
    liveness: createClient(LivenessService, t),
    apis: createClient(ApisService, t),
    keys: createClient(KeysService, t),
    identities: createClient(IdentitiesService, t),
    permissions: createClient(PermissionsService, t),
    ratelimit: createClient(RatelimitService, t),
    analytics: createClient(AnalyticsService, t),
    webhooks: createClient(WebhooksService, t),
  };
}

/** What a refused call tells the client: the Connect code and the error detail's fields. */
export interface Refusal {
  code: Code;
  /** The HTTP status of the catalog entry (403, 404, ...). */
  status: number;
  /** The catalog code, `err:svc:<category>:<name>`. */
  errorCode: string;
  title: string;
  detail: string;
  type: string;
  /** The violations of a 400, as `location` and `message`. */
  errors: { location: string; message: string }[];
  requestId: string;
}

/**
 * Awaits a call that must be refused and returns what the refusal says; fails the test when
 * the call succeeds or its error carries no error detail.
 */
export async function refusal(call: Promise<unknown>): Promise<Refusal> {
  const outcome = await call.then(
    (value) => ({ value }),
    (err: unknown) => ({ err: ConnectError.from(err) }),
  );
  if (!("err" in outcome)) {
    expect.fail(`the call should have been refused, it answered ${describe(outcome.value)}`);
  }
  const e = outcome.err;
  const d = e.findDetails(ErrorDetailSchema)[0];
  if (!d) expect.fail(`the refusal carries no error detail: ${Code[e.code]} ${e.rawMessage}`);
  return {
    code: e.code,
    status: d.status,
    errorCode: d.code,
    title: d.title,
    detail: d.detail,
    type: d.type,
    errors: d.errors.map((v) => ({ location: v.location, message: v.message })),
    requestId: d.requestId,
  };
}

function describe(value: unknown): string {
  return JSON.stringify(value, (_, v) => (typeof v === "bigint" ? `${v}n` : v)).slice(0, 300);
}
