import { gzipSync } from "node:zlib";
import type { DescMethod } from "@bufbuild/protobuf";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { namespaceOf } from "../../src/services/procedures.js";
import { SERVICES } from "../harness/doors.js";
import { currentEngine } from "../harness/engine.js";
import { useServer } from "../harness/server.js";
import { binaryBodies, framings, generatedServices, jsonBodies } from "./arbitraries.js";
import {
  closeSessions,
  connectProto,
  envelope,
  grpc,
  grpcWeb,
  type RawAnswer,
  SERVER_FAULT_CONNECT_CODES,
  SERVER_FAULT_GRPC_CODES,
} from "./raw-doors.js";

/**
 * "Never a 5xx for bad input", on every procedure of the contract and every door: /v2
 * JSON, Connect JSON, Connect binary, gRPC-web, gRPC on the main port and on the grpc-js
 * port. Bodies are request-shaped JSON with right and wrong kinds, arbitrary JSON, broken
 * text, invalid UTF-8, and protobuf bytes valid, mutated, random or nested too deep; with a
 * root key (so they reach validation and the procedures), now and then without one, and now
 * and then with a wrong content type. Nothing here is down, so a 5xx (or gRPC INTERNAL,
 * UNKNOWN, UNAVAILABLE, DATA_LOSS) is always a fault.
 *
 * FUZZ_SEED=<n> replays a run (procedure i runs with seed n + i, as a failure reports);
 * FUZZ_RUNS=<n> runs more cases per procedure.
 */

const s = useServer();
afterAll(() => closeSessions());

// Each engine's run of `npm test` draws its own cases (the default seed differs by engine), so
// the two runs together try twice as many as one.
const SEED = Number(
  process.env.FUZZ_SEED ?? 20_261_127 + (currentEngine() === "postgres" ? 1_000 : 0),
);
const RUNS = Number(process.env.FUZZ_RUNS ?? 8);

const services = await generatedServices();
const PROCEDURES = services.flatMap((service) =>
  service.methods.map((method) => ({
    name: `${namespaceOf(service)}.${method.localName}`,
    method,
  })),
);

type Door = "json" | "connect-json" | "connect-proto" | "grpc-web" | "grpc-main" | "grpc-js";
const DOOR_NAMES: Door[] = [
  "json",
  "connect-json",
  "connect-proto",
  "grpc-web",
  "grpc-main",
  "grpc-js",
];

const WRONG_TYPES = [
  "text/plain",
  "application/xml",
  "application/x-www-form-urlencoded",
  "application/json; charset=latin1",
  "application/connect+proto",
  "application/grpc+json",
  "multipart/form-data; boundary=x",
];

interface Case {
  door: Door;
  body: Uint8Array;
  auth: boolean;
  contentType?: string;
  framing: string;
  /** A declared body encoding, and whether the body really is gzip (whole or cut short). */
  encoding?: { name: string; gzip: "no" | "whole" | "cut" };
  /** A timeout header value, mostly malformed. */
  timeout?: string;
}

const timeouts = fc.oneof(
  { arbitrary: fc.constant(undefined), weight: 8 },
  { arbitrary: fc.constantFrom("soon", "-1", "1H", "99999999999999999999S", "0", "1m"), weight: 1 },
);

const encodings = fc.oneof(
  { arbitrary: fc.constant(undefined), weight: 6 },
  {
    arbitrary: fc.record({
      name: fc.constantFrom("gzip", "br", "identity", "bogus"),
      gzip: fc.constantFrom("no", "whole", "cut") as fc.Arbitrary<"no" | "whole" | "cut">,
    }),
    weight: 1,
  },
);

function caseFor(method: DescMethod): fc.Arbitrary<Case> {
  const door = fc.constantFrom(...DOOR_NAMES);
  return door.chain((d) =>
    fc.record({
      door: fc.constant(d),
      body: d === "json" || d === "connect-json" ? jsonBodies(method) : binaryBodies(method),
      auth: fc.oneof(
        { arbitrary: fc.constant(true), weight: 5 },
        { arbitrary: fc.constant(false), weight: 1 },
      ),
      contentType: fc.oneof(
        { arbitrary: fc.constant(undefined), weight: 7 },
        { arbitrary: fc.constantFrom(...WRONG_TYPES), weight: 1 },
      ),
      framing: framings,
      encoding: encodings,
      timeout: timeouts,
    }),
  );
}

function frame(body: Uint8Array, framing: string): Uint8Array {
  switch (framing) {
    case "raw":
      return body;
    case "compressed-flag":
      return envelope(body, 1);
    case "short-length": {
      const e = envelope(body);
      new DataView(e.buffer).setUint32(1, body.length + 7);
      return e;
    }
    case "two-messages":
      return Buffer.concat([envelope(body), envelope(body)]);
    default:
      return envelope(body);
  }
}

function headersOf(c: Case): Record<string, string> {
  const h: Record<string, string> = c.auth ? { authorization: `Bearer ${s.rootKey}` } : {};
  if (c.contentType !== undefined) h["content-type"] = c.contentType;
  if (c.encoding)
    h[c.door.startsWith("grpc") ? "grpc-encoding" : "content-encoding"] = c.encoding.name;
  if (c.timeout !== undefined)
    h[c.door.startsWith("grpc") ? "grpc-timeout" : "connect-timeout-ms"] = c.timeout;
  return h;
}

/** The body as sent: gzipped (and maybe cut short) when the case says so. */
function bodyOf(c: Case): Uint8Array {
  if (!c.encoding || c.encoding.gzip === "no") return c.body;
  const zipped = gzipSync(c.body);
  return c.encoding.gzip === "whole" ? zipped : zipped.subarray(0, Math.max(1, zipped.length >> 1));
}

async function send(name: string, method: DescMethod, c: Case): Promise<RawAnswer> {
  const path = `/${method.parent.typeName}/${method.name}`;
  const h = headersOf(c);
  const body = bodyOf(c);
  const framed = () => frame(body, c.framing);
  switch (c.door) {
    case "json":
    case "connect-json": {
      const url = c.door === "json" ? `${s.url}/v2/${name}` : `${s.url}${path}`;
      const res = await fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json", ...h },
        body,
      });
      const text = await res.text();
      return { status: res.status, code: "", message: text.slice(0, 500) };
    }
    case "connect-proto":
      return connectProto(s.url, path, body, h);
    case "grpc-web":
      return grpcWeb(s.url, path, framed(), h);
    case "grpc-main":
      return grpc(s.url, path, framed(), h);
    case "grpc-js":
      return grpc(`http://127.0.0.1:${s.app.grpcPort}`, path, framed(), h);
  }
}

const seen = new Map<string, number>();

function describeCase(c: Case): string {
  const body = Buffer.from(c.body);
  const shown =
    body.length > 300
      ? `${body.subarray(0, 300).toString("hex")}… (${body.length} bytes)`
      : body.toString("hex");
  const encoding = c.encoding ? `${c.encoding.name}/${c.encoding.gzip}` : "none";
  return `${c.door} auth=${c.auth} type=${c.contentType ?? "(right)"} framing=${c.framing} encoding=${encoding} body(hex)=${shown}`;
}

async function check(name: string, method: DescMethod, c: Case): Promise<void> {
  const res = await send(name, method, c);
  const key = `${c.door} ${res.status}${res.code ? `/${res.code}` : ""}`;
  seen.set(key, (seen.get(key) ?? 0) + 1);
  const context = `${name} via ${describeCase(c)} answered ${res.status} ${res.code} ${res.message}`;
  expect(res.status, context).toBeLessThan(500);
  expect(SERVER_FAULT_CONNECT_CODES.has(res.code), context).toBe(false);
  expect(SERVER_FAULT_GRPC_CODES.has(res.code), context).toBe(false);
}

describe("every procedure through every door", () => {
  afterAll(() => {
    const summary = Object.fromEntries([...seen].sort(([a], [b]) => a.localeCompare(b)));
    console.log(`[fuzz] seed ${SEED}, ${RUNS} runs per procedure: ${JSON.stringify(summary)}`);
  });

  it("covers the whole contract", () => {
    expect(services.map((x) => x.typeName).sort()).toEqual(SERVICES.map((x) => x.typeName).sort());
    expect(PROCEDURES.length).toBeGreaterThan(40);
  });

  it.each(PROCEDURES.map((p, i) => ({ ...p, seed: SEED + i })))(
    "$name: no bad input gets a 5xx on any door",
    async ({ name, method, seed }) => {
      // Every door at least once with nothing at all, then random cases.
      for (const door of DOOR_NAMES) {
        await check(name, method, { door, body: new Uint8Array(0), auth: true, framing: "raw" });
      }
      await fc.assert(
        fc.asyncProperty(caseFor(method), (c) => check(name, method, c)),
        { seed, numRuns: RUNS, endOnFailure: true },
      );
    },
  );
});
