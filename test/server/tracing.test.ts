import { Writable } from "node:stream";
import {
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace";
import { afterAll, describe, expect, it } from "vitest";
import { createLogger } from "../../src/log.js";
import { createTracing } from "../../src/tracing/tracing.js";
import { createTransports } from "../harness/doors.js";
import { redisUrl } from "../harness/engine.js";
import { useServer } from "../harness/server.js";
import { typedApi } from "../harness/typed.js";

// With tracing on, a call is a SERVER span named for its procedure, the child of the caller's
// traceparent, with the database (and Redis) spans it caused under it, outcome attributes
// and no secret; the log lines it writes carry its trace id.

const exporter = new InMemorySpanExporter();
const tracing = createTracing([new SimpleSpanProcessor({ exporter })]);
const lines: Record<string, unknown>[] = [];
const capture = new Writable({
  write(chunk, _encoding, done) {
    lines.push(JSON.parse(String(chunk)));
    done();
  },
});
const s = useServer({
  log: createLogger("debug", capture),
  tracing,
  config: redisUrl ? { redisUrl } : {},
});
afterAll(() => tracing.shutdown());

const VERIFY = "latchkey.v2.KeysService/VerifyKey";

/** A new W3C trace context: its trace id, its span id and the header carrying them. */
function traceparent() {
  const traceId = crypto.randomUUID().replaceAll("-", "");
  const spanId = traceId.slice(0, 16);
  return { traceId, spanId, header: `00-${traceId}-${spanId}-01` };
}

/** The spans of a trace, once its procedure span has ended (polled: export is not awaited). */
async function traceOf(traceId: string): Promise<ReadableSpan[]> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const spans = exporter.getFinishedSpans().filter((x) => x.spanContext().traceId === traceId);
    if (spans.some((x) => x.name === VERIFY) || Date.now() > deadline) return spans;
    await new Promise((r) => setImmediate(r));
  }
}

/** A key with an auto-applied rate limit, so that a verification takes from a counter. */
async function limitedKey() {
  const apiId = await s.seed.api();
  const { data } = await s.api.keys.createKey({
    apiId,
    ratelimits: [{ name: "calls", limit: 1000n, duration: 60_000n, autoApply: true }],
  });
  return data?.key as string;
}

/** The part of a /v2 or Connect JSON verification answer the test reads. */
type VerifyAnswer = { data: { valid?: boolean; code?: string } };

/** Verifies `key` with a JSON POST to `path` of the main port (/v2 or Connect); its answer. */
async function verifyOnMainPort(
  path: string,
  key: string,
  traceparentHeader: string,
): Promise<VerifyAnswer> {
  const res = await fetch(`${s.app.url}${path}`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      authorization: `Bearer ${s.rootKey}`,
      traceparent: traceparentHeader,
    },
    body: JSON.stringify({ key }),
  });
  const body = (await res.json()) as VerifyAnswer;
  expect(res.status, JSON.stringify(body)).toBe(200);
  return body;
}

/** Checks one verification's tree; returns its procedure span. */
async function expectVerifyTree(
  trace: ReturnType<typeof traceparent>,
  door: string,
  secrets: string[],
): Promise<ReadableSpan> {
  const spans = await traceOf(trace.traceId);
  const root = spans.find((x) => x.name === VERIFY) as ReadableSpan;
  expect(root).toBeDefined();
  expect(root.parentSpanContext?.spanId).toBe(trace.spanId);
  expect(root.attributes).toMatchObject({
    "rpc.service": "latchkey.v2.KeysService",
    "rpc.method": "VerifyKey",
    "latchkey.procedure": "keys.verifyKey",
    "latchkey.door": door,
    "latchkey.status": 200,
    "latchkey.verification.code": "VALID",
  });
  const children = spans.filter((x) => x.parentSpanContext?.spanId === root.spanContext().spanId);
  const queries = children.filter((x) => x.attributes["db.system.name"] === "postgresql");
  expect(queries.length).toBeGreaterThan(0);
  for (const q of queries) {
    expect(q.attributes["db.operation.name"]).toBe(q.name);
    expect(q.attributes["latchkey.db.engine"]).toBe(
      s.engine === "postgres" ? "postgres" : "pglite",
    );
  }
  const redis = children.filter((x) => x.attributes["db.system.name"] === "redis");
  expect(redis.map((x) => x.name)).toEqual(redisUrl ? ["ratelimit check"] : []);
  const recorded = JSON.stringify(spans.map((x) => [x.name, x.attributes, x.events]));
  for (const secret of secrets) expect(recorded).not.toContain(secret);
  return root;
}

describe("tracing", () => {
  it("traces a verification through every door (/v2, Connect, gRPC and gRPC-web on the main port, the gRPC port), and stamps its log lines", async () => {
    const json = traceparent();
    const jsonKey = await limitedKey();
    const res = await verifyOnMainPort("/v2/keys.verifyKey", jsonKey, json.header);
    expect(res.data.code).toBe("VALID");
    const jsonRoot = await expectVerifyTree(json, "json", [jsonKey, s.rootKey]);

    const connect = traceparent();
    const connectKey = await limitedKey();
    const answer = await verifyOnMainPort(`/${VERIFY}`, connectKey, connect.header);
    expect(answer.data.valid).toBe(true);
    await expectVerifyTree(connect, "connect", [connectKey, s.rootKey]);

    const grpc = traceparent();
    const grpcKey = await limitedKey();
    const verified = await s.api.keys.verifyKey(
      { key: grpcKey },
      { headers: { traceparent: grpc.header } },
    );
    expect(verified.data?.valid).toBe(true);
    const grpcRoot = await expectVerifyTree(grpc, "grpc", [grpcKey, s.rootKey]);
    expect(grpcRoot.attributes["rpc.grpc.status_code"]).toBe(0);

    // gRPC and gRPC-web on the main port (the Connect door's other protocols).
    const transports = createTransports(s.app.url, s.app.url);
    for (const [protocol, door] of [
      ["grpc-main", "grpc"],
      ["grpc-web", "grpc-web"],
    ] as const) {
      const trace = traceparent();
      const key = await limitedKey();
      const answered = await typedApi(transports[protocol], s.rootKey).keys.verifyKey(
        { key },
        { headers: { traceparent: trace.header } },
      );
      expect(answered.data?.valid).toBe(true);
      const root = await expectVerifyTree(trace, door, [key, s.rootKey]);
      expect(root.attributes["rpc.grpc.status_code"]).toBe(0);
    }

    const requestId = jsonRoot.attributes["latchkey.request_id"];
    const line = lines.find((l) => l.msg === "call" && l.requestId === requestId);
    expect(line).toMatchObject({ trace_id: json.traceId, span_id: jsonRoot.spanContext().spanId });
  });

  it("records a refusal's status and catalog code, and starts a trace of its own without traceparent", async () => {
    exporter.reset();
    const refused = await s.raw("/v2/keys.verifyKey", {
      method: "POST",
      headers: { "content-type": "application/json", authorization: "Bearer not_a_root_key" },
      body: JSON.stringify({ key: "k_not_a_key" }),
    });
    expect(refused.status).toBe(401);
    const deadline = Date.now() + 10_000;
    let span: ReadableSpan | undefined;
    while (!span && Date.now() < deadline) {
      span = exporter.getFinishedSpans().find((x) => x.name === VERIFY);
      if (!span) await new Promise((r) => setImmediate(r));
    }
    expect(span?.parentSpanContext).toBeUndefined();
    expect(span?.attributes).toMatchObject({
      "latchkey.status": 401,
      "latchkey.error.code": "err:svc:authentication:key_not_found",
    });
    expect(JSON.stringify(span?.attributes)).not.toContain("not_a_root_key");
  });
});
