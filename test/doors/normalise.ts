import { Code } from "@connectrpc/connect";
import { catalog } from "../../src/errors/catalog.js";
import type { CallResult } from "../harness/doors.js";

// A door's answer carries values that differ on every run and on every door, since each door's
// call gets a setup of its own: ids, secrets, request ids and audit sequence numbers. The
// normalised answer shows each as a placeholder, so that two doors' answers compare equal
// exactly when they say the same thing about the same objects.

/** Every id prefix Latchkey hands out (src/domain/ids.ts), followed by the 16-character random part. */
const ID = /\b(api|key|id|perm|role|rl|rlns|rlor|ws|req|rk|res|whep)_[A-Za-z0-9]{16}\b/g;
/** A webhook delivery's id (`msg_` and 32 hex digits) and a webhook signing secret. */
const WEBHOOK_VALUES = /\b(msg_[0-9a-f]{32}|whsec_[A-Za-z0-9+/]{43}=)/g;
/** The keys of the conformance setups all carry this prefix, so a secret is recognisable. */
export const KEY_PREFIX = "cf";
/** A secret (`cf_` and base58) or its displayable start (`cf_` and four characters). */
const SECRET = new RegExp(`\\b${KEY_PREFIX}_[1-9A-HJ-NP-Za-km-z]{4,}\\b`, "g");
/** Timestamps are the server's test clock, which this suite never moves, plus or minus this. */
const TIMESTAMP_WINDOW_MS = 5 * 365 * 24 * 3_600_000;

/**
 * The values a setup created, in the order it created them: each is shown as `<kind:n>`
 * (`<api:1>` is the setup's first API). Values the call itself created, which no setup
 * knows, are numbered by their first appearance in the answer instead: `<api#1>`.
 */
export class Placeholders {
  readonly #known = new Map<string, string>();
  readonly #counts = new Map<string, number>();

  /** Registers a value the setup created, under the next number of its kind. */
  add(kind: string, value: string): void {
    if (this.#known.has(value)) return;
    const n = (this.#counts.get(kind) ?? 0) + 1;
    this.#counts.set(kind, n);
    this.#known.set(value, `<${kind}:${n}>`);
  }

  /** Registers a value under a placeholder of its own (the call's request id). */
  name(value: string, placeholder: string): void {
    this.#known.set(value, placeholder);
  }

  /** The registered values, longest first, so that a value inside another is not replaced early. */
  entries(): [string, string][] {
    return [...this.#known].sort(([a], [b]) => b.length - a.length);
  }
}

/** The answer with every run-specific value replaced; the request id must be a `req_` id. */
export function normalise(result: CallResult, known: Placeholders, now: number): unknown {
  if (result.requestId !== "") known.name(result.requestId, "<request>");
  const fresh = new Map<string, string>();
  const counts = new Map<string, number>();
  const firstSeen = (kind: string, value: string) => {
    let placeholder = fresh.get(value);
    if (!placeholder) {
      const n = (counts.get(kind) ?? 0) + 1;
      counts.set(kind, n);
      placeholder = `<${kind}#${n}>`;
      fresh.set(value, placeholder);
    }
    return placeholder;
  };
  const knownEntries = known.entries();

  const text = (s: string): string => {
    let out = s;
    for (const [value, placeholder] of knownEntries) out = out.split(value).join(placeholder);
    out = out.replace(ID, (id, prefix: string) => firstSeen(prefix, id));
    out = out.replace(WEBHOOK_VALUES, (v) => firstSeen(v.slice(0, v.indexOf("_")), v));
    return out.replace(SECRET, (secret) =>
      firstSeen(secret.length === KEY_PREFIX.length + 5 ? "start" : "secret", secret),
    );
  };
  const walk = (v: unknown, key: string): unknown => {
    if (typeof v === "string") {
      // Audit records are numbered by the database, across every workspace.
      if ((key === "id" || key === "cursor") && /^\d+$/.test(v)) return firstSeen("seq", v);
      return text(v);
    }
    if (typeof v === "number" && Number.isInteger(v) && Math.abs(v - now) < TIMESTAMP_WINDOW_MS) {
      const delta = v - now;
      return delta === 0 ? "<now>" : `<now${delta > 0 ? "+" : ""}${delta}>`;
    }
    if (Array.isArray(v)) return v.map((item) => walk(item, key));
    if (v !== null && typeof v === "object")
      return Object.fromEntries(Object.entries(v).map(([k, item]) => [k, walk(item, k)]));
    return v;
  };

  const { requestId, error, ...rest } = result;
  return {
    requestId: /^req_/.test(requestId) ? "<request>" : requestId,
    ...(walk(rest, "") as object),
    ...(error ? { error: walk(errorOf(result), "") } : {}),
  };
}

/**
 * The error in one shape: the /v2 envelope carries its status and omits an empty violation
 * list, the error detail of Connect and gRPC has neither (the status is the result's). The
 * Connect code of a /v2 answer is the one the catalog gives its error code, so a door that
 * answers the right detail under another Connect or gRPC code differs.
 */
function errorOf(result: CallResult) {
  const e = result.error as NonNullable<CallResult["error"]> & { status?: number };
  const entry = Object.values(catalog).find((c) => c.code === e.code);
  return {
    status: e.status ?? result.status,
    connectCode: e.connectCode ?? (entry ? Code[entry.connectCode] : "not in the catalog"),
    code: e.code,
    title: e.title,
    detail: e.detail,
    type: e.type,
    errors: e.errors ?? [],
  };
}
