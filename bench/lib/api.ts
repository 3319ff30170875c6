// Calls to a Latchkey under test through its /v2 JSON door, and what its /metrics (on its admin
// port) say.

/** The root key every scenario starts Latchkey with (ROOT_KEY). */
export const ROOT_KEY = "bench_root_key_0123456789abcdef";

export const authorization = (key = ROOT_KEY) => ({ authorization: `Bearer ${key}` });

/** A rate limit that never runs out: verifications stay VALID under any load. */
export const HIGH_LIMIT = [{ name: "requests", limit: 1_000_000_000, duration: 60_000 }];

export interface Answer {
  status: number;
  // biome-ignore lint/suspicious/noExplicitAny: an answer's JSON, read by the caller that knows its procedure
  body: any;
}

/**
 * POST /v2/<procedure> with `key` (the root key by default; null: anonymous). Never throws
 * on a status; a body that is not JSON is returned as text.
 */
export async function post(
  base: string,
  procedure: string,
  body: unknown,
  options: { key?: string | null; signal?: AbortSignal } = {},
): Promise<Answer> {
  const key = options.key === undefined ? ROOT_KEY : options.key;
  const res = await fetch(`${base}/v2/${procedure}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...(key === null ? {} : authorization(key)) },
    body: typeof body === "string" ? body : JSON.stringify(body),
    signal: options.signal,
  });
  const text = await res.text();
  return { status: res.status, body: text.startsWith("{") ? JSON.parse(text) : text };
}

/** `post` that throws unless the answer is 2xx; resolves to its `data`. */
export async function call(
  base: string,
  procedure: string,
  body: unknown,
  options: { key?: string | null } = {},
  // biome-ignore lint/suspicious/noExplicitAny: as Answer.body
): Promise<any> {
  const r = await post(base, procedure, body, options);
  if (r.status < 200 || r.status > 299) {
    throw new Error(`${procedure}: HTTP ${r.status} ${JSON.stringify(r.body)}`);
  }
  return r.body.data;
}

export interface SeededKey {
  apiId: string;
  keyId: string;
  key: string;
}

/** A key (createKey's `fields`) in `apiId`, or in a new API. */
export async function seedKey(
  base: string,
  fields: Record<string, unknown> = {},
  apiId?: string,
): Promise<SeededKey> {
  const id = apiId ?? (await call(base, "apis.createApi", { name: "bench" })).apiId;
  const data = await call(base, "keys.createKey", { apiId: id, ...fields });
  return { apiId: id, keyId: data.keyId, key: data.key };
}

/** keys.verifyKey, anonymous, as a key's holder calls it: the answer's data. */
export const verify = async (base: string, key: string) =>
  call(base, "keys.verifyKey", { key }, { key: null });

export interface Metrics {
  /** latchkey_verifications_total by code. */
  codes: Record<string, number>;
  /** keys.verifyKey calls by door and status ("json 200"). */
  calls: Record<string, number>;
  /** Single gauges and counters (memory, events), by name without the latchkey_ prefix. */
  values: Record<string, number>;
}

/** Reads a server's /metrics; `admin` is the base URL of its admin port (`Latchkey.admin`). */
export async function metricsOf(admin: string): Promise<Metrics> {
  const text = await (await fetch(`${admin}/metrics`)).text();
  const out: Metrics = { codes: {}, calls: {}, values: {} };
  for (const line of text.split("\n")) {
    let m = /^latchkey_verifications_total\{code="(\w+)"\} (\S+)/.exec(line);
    if (m?.[1]) out.codes[m[1]] = Number(m[2]);
    m =
      /^latchkey_request_duration_seconds_count\{procedure="keys\.verifyKey",door="(\w+)",status="(\d+)"\} (\S+)/.exec(
        line,
      );
    if (m) out.calls[`${m[1]} ${m[2]}`] = Number(m[3]);
    m = /^latchkey_(\w+) (\S+)$/.exec(line);
    if (m?.[1]) out.values[m[1]] = Number(m[2]);
  }
  return out;
}

/** `b - a` for every name, the unchanged ones left out. */
export function delta(a: Record<string, number>, b: Record<string, number>) {
  const out: Record<string, number> = {};
  for (const k of new Set([...Object.keys(a), ...Object.keys(b)])) {
    const d = (b[k] ?? 0) - (a[k] ?? 0);
    if (d !== 0) out[k] = d;
  }
  return out;
}

export interface Answers {
  codes: Record<string, number>;
  calls: Record<string, number>;
  events: { recorded: number; dropped: number; written: number; buffered: number };
}

/**
 * What the server counted between two readings; `check` is told when an answer was not VALID
 * or a call not 200, or when nothing was verified at all.
 */
export function answersBetween(
  what: string,
  before: Metrics,
  after: Metrics,
  check: (ok: boolean, problem: string) => boolean,
): Answers {
  const codes = delta(before.codes, after.codes);
  const calls = delta(before.calls, after.calls);
  const bad = Object.entries(codes).filter(([c]) => c !== "VALID");
  const badCalls = Object.entries(calls).filter(([k]) => !k.endsWith(" 200"));
  check(bad.length === 0, `${what}: answers other than VALID: ${JSON.stringify(bad)}`);
  check(badCalls.length === 0, `${what}: calls not 200: ${JSON.stringify(badCalls)}`);
  check((codes.VALID ?? 0) > 0, `${what}: no VALID answers counted`);
  // A checkout built before the counters were named _total (verify-ab) has the bare names.
  const read = (m: Metrics, name: string) =>
    m.values[`events_${name}_total`] ?? m.values[`events_${name}`] ?? 0;
  const counter = (name: string) => read(after, name) - read(before, name);
  return {
    codes,
    calls,
    events: {
      recorded: counter("recorded"),
      dropped: counter("dropped"),
      written: counter("written"),
      buffered: after.values.events_buffered ?? 0,
    },
  };
}

/** One gRPC message frame: a zero flag, the length, the message. */
export function grpcFrame(message: Uint8Array): Buffer {
  const frame = Buffer.alloc(5 + message.length);
  frame.writeUInt32BE(message.length, 1);
  Buffer.from(message).copy(frame, 5);
  return frame;
}
