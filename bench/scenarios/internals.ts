// What the re-implementations of library internals buy on this Node: each operation timed the
// library's way and Latchkey's way, alternately, `rounds` times (median ns per operation).
//
//   npm run bench -- internals [headers] [invoke] [inflight] [nodelay]
//
// headers    a call's header bags: undici Headers vs LiteHeaders over Node's record
// invoke     one unary call through two interceptors: Connect's createHandlerContext +
//            invokeUnaryImplementation vs bindUnary
// inflight   add + remove with 64 in flight: Set vs Inflight, and the old-generation bytes that
//            churn leaves (runs with --expose-gc)
// nodelay    PostgreSQL: a 100-row COPY through postgres.js's own socket vs noDelaySocket
import { getHeapSpaceStatistics } from "node:v8";
import { create } from "@bufbuild/protobuf";
import { createContextValues, createHandlerContext, type Interceptor } from "@connectrpc/connect";
import { invokeUnaryImplementation } from "@connectrpc/connect/protocol";
import postgres from "postgres";
import type * as KeysPb from "../../gen/latchkey/v2/keys_pb.ts";
import type * as InflightModule from "../../src/server/inflight.ts";
import type * as InvokeModule from "../../src/server/invoke.ts";
import type * as LiteHeadersModule from "../../src/server/lite-headers.ts";
import type * as PostgresModule from "../../src/storage/postgres.ts";
import { alternate, type Op } from "../lib/alternate.ts";
import { adminUrl } from "../lib/database.ts";
import { fromDist } from "../lib/dist.ts";
import { num, table } from "../lib/markdown.ts";
import { chosenParts, defineScenario, setting } from "../lib/scenario.ts";
import { round } from "../lib/stats.ts";

// The context values (9 ns a call) and the call histogram (0.23 us) were compared here too,
// and given back to the library: their saving was below a whole-server run's noise.
const PARTS = ["headers", "invoke", "inflight", "nodelay"] as const;
type Part = (typeof PARTS)[number];

export interface InternalsSettings {
  parts: Part[];
  rounds: number;
  /** Operations per round (COPYs: `copies`). */
  operations: number;
  copies: number;
}

export interface Comparison {
  name: string;
  libNs: number;
  oursNs: number;
  savedNs: number;
  spread: { lib: number[]; ours: number[] };
  oldGenBytesPer100kOps?: { lib: number; ours: number };
}

export interface InternalsResult {
  comparisons: Comparison[];
}

let sink = 0;

/** Median ns per operation of `lib` and `ours`, alternated, after a warm-up of each. */
async function ab(name: string, rounds: number, n: number, lib: Op, ours: Op): Promise<Comparison> {
  const { ns, spread } = await alternate(rounds, n, [lib, ours]);
  const [libNs = Number.NaN, oursNs = Number.NaN] = ns;
  const out = {
    name,
    libNs,
    oursNs,
    savedNs: round(libNs - oursNs, 1),
    spread: { lib: spread[0] ?? [], ours: spread[1] ?? [] },
  };
  console.log(JSON.stringify(out));
  return out;
}

const nodeRecord = (): Record<string, string> => ({
  host: "127.0.0.1:8080",
  "content-type": "application/json",
  "content-length": "44",
  authorization: "Bearer bench_root_key_0123456789abcdef",
  "user-agent": "bench/1.0",
  accept: "*/*",
});

async function comparisons(s: InternalsSettings): Promise<Record<Part, () => Promise<Comparison>>> {
  const { LiteHeaders } = await fromDist<typeof LiteHeadersModule>("src/server/lite-headers.js");
  const { bindUnary } = await fromDist<typeof InvokeModule>("src/server/invoke.js");
  const { Inflight } = await fromDist<typeof InflightModule>("src/server/inflight.js");
  const { noDelaySocket } = await fromDist<typeof PostgresModule>("src/storage/postgres.js");
  const keys = await fromDist<typeof KeysPb>("gen/latchkey/v2/keys_pb.js");
  const run = (name: string, lib: Op, ours: Op, n = s.operations) =>
    ab(name, s.rounds, n, lib, ours);
  return {
    headers: () =>
      run(
        "headers",
        (n) => {
          for (let i = 0; i < n; i++) {
            const raw = nodeRecord();
            const req = new Headers();
            for (const k in raw) req.append(k, raw[k] ?? "");
            const h = new Headers();
            const t = new Headers();
            h.set("content-type", "application/json");
            sink +=
              (req.get("authorization")?.length ?? 0) + (req.get("content-type")?.length ?? 0);
            sink += t.has("x") ? 1 : 0;
          }
        },
        (n) => {
          for (let i = 0; i < n; i++) {
            const req = LiteHeaders.fromNode(nodeRecord());
            const h = new LiteHeaders();
            const t = new LiteHeaders();
            h.set("content-type", "application/json");
            sink +=
              (req.get("authorization")?.length ?? 0) + (req.get("content-type")?.length ?? 0);
            sink += t.isEmpty() ? 1 : 0;
          }
        },
      ),
    invoke: () => {
      const method = keys.KeysService.method.verifyKey;
      const spec = {
        kind: "unary",
        method,
        impl: async (
          req: KeysPb.VerifyKeyRequest,
          ctx: {
            requestHeader: { get(k: string): string | null };
            responseHeader: { set(k: string, v: string): void };
          },
        ) => {
          ctx.responseHeader.set("x-id", "1");
          sink += req.key.length + (ctx.requestHeader.get("authorization")?.length ?? 0);
          return { valid: true };
        },
      } as unknown as InvokeModule.UnarySpec;
      const pass: Interceptor = (next) => (req) => next(req);
      const interceptors = [pass, pass];
      const input = create(keys.VerifyKeyRequestSchema, { key: "k_0123456789" });
      const bound = bindUnary(spec, interceptors);
      const url = "http://127.0.0.1/latchkey.v2.KeysService/VerifyKey";
      return run(
        "invoke",
        async (n) => {
          for (let i = 0; i < n; i++) {
            const raw = nodeRecord();
            const requestHeader = new Headers();
            for (const k in raw) requestHeader.append(k, raw[k] ?? "");
            const ctx = createHandlerContext({
              service: method.parent,
              method,
              protocolName: "connect",
              requestMethod: "POST",
              url,
              requestHeader,
              contextValues: createContextValues(),
            });
            const m = await invokeUnaryImplementation(spec, ctx, input, interceptors);
            sink += (m as unknown as { valid: boolean }).valid ? 1 : 0;
          }
        },
        async (n) => {
          for (let i = 0; i < n; i++) {
            const call = {
              protocolName: "connect",
              requestMethod: "POST",
              url,
              header: LiteHeaders.fromNode(nodeRecord()),
              values: createContextValues(),
            };
            const r = await bound(call, input);
            sink += (r.message as unknown as { valid: boolean }).valid ? 1 : 0;
          }
        },
      );
    },
    inflight: async () => {
      const set = new Set<object>();
      const list = new Inflight<object>();
      const churn =
        <E>(add: (x: object) => E, remove: (e: E) => void): Op =>
        (n) => {
          const ring: E[] = [];
          for (let i = 0; i < 64; i++) ring.push(add({ i }));
          for (let i = 0; i < n; i++) {
            remove(ring[i & 63] as E);
            ring[i & 63] = add({ i });
          }
          for (const e of ring) remove(e);
        };
      const libFn = churn(
        (x) => {
          set.add(x);
          return x;
        },
        (x) => set.delete(x),
      );
      const oursFn = churn(
        (x) => list.add(x),
        (e) => list.remove(e),
      );
      const out = await run("inflight", libFn, oursFn);
      const gc = globalThis.gc;
      if (gc) {
        const old = () =>
          getHeapSpaceStatistics().find((x) => x.space_name === "old_space")?.space_used_size ?? 0;
        const oldBytes = (fn: Op) => {
          gc();
          gc();
          const a = old();
          fn(100_000);
          return old() - a;
        };
        out.oldGenBytesPer100kOps = { lib: oldBytes(libFn), ours: oldBytes(oursFn) };
      }
      return out;
    },
    nodelay: async () => {
      const plain = postgres(adminUrl(), { max: 1, onnotice: () => {} });
      const fast = postgres(adminUrl(), {
        max: 1,
        onnotice: () => {},
        // Documented in postgres.js's README ("Custom socket"), missing from its types.
        ...({ socket: noDelaySocket() } as object),
      });
      const name = `bench_nodelay_${process.pid}`;
      await plain.unsafe(`create table ${name} (a int, b text)`);
      const rows = Array.from({ length: 100 }, (_, i) => `${i}\tverification event ${i}\n`).join(
        "",
      );
      const copies = (sql: postgres.Sql) => async (n: number) => {
        for (let i = 0; i < n; i++) {
          const w = await sql.unsafe(`copy ${name} (a, b) from stdin`).writable();
          await new Promise((resolve, reject) => {
            w.on("finish", resolve);
            w.on("error", reject);
            w.end(rows);
          });
        }
      };
      try {
        return await run("nodelay (per COPY)", copies(plain), copies(fast), s.copies);
      } finally {
        await plain.unsafe(`drop table ${name}`);
        await plain.end();
        await fast.end();
      }
    },
  };
}

export default defineScenario<InternalsSettings, InternalsResult>({
  name: "internals",
  description: "library internals against Latchkey's re-implementations, per operation",
  nodeArgs: ["--expose-gc"],
  settings: ({ quick, args }) => {
    return {
      parts: chosenParts("internals", PARTS, args),
      rounds: setting("BENCH_ROUNDS", 5, 3, quick),
      operations: setting("BENCH_OPERATIONS", 1_000_000, 50_000, quick),
      copies: quick ? 5 : 20,
    };
  },
  async run({ settings }) {
    const all = await comparisons(settings);
    const out: Comparison[] = [];
    for (const part of settings.parts) out.push(await all[part]());
    console.log(`node ${process.version}; sink ${sink > 0}`);
    return { comparisons: out };
  },
  render: (r) => {
    // Nanoseconds up to a microsecond, then microseconds, then milliseconds (a COPY).
    const time = (ns: number) =>
      ns < 1000
        ? `${num(ns, 1)} ns`
        : ns < 1e6
          ? `${num(ns / 1000, 2)} us`
          : `${num(ns / 1e6, 2)} ms`;
    return table(
      [
        "operation",
        "library:",
        "Latchkey's:",
        "saved per operation:",
        "old-generation bytes per 100k, library / ours:",
      ],
      r.comparisons.map((c) => [
        c.name,
        time(c.libNs),
        time(c.oursNs),
        time(c.savedNs),
        c.oldGenBytesPer100kOps
          ? `${num(c.oldGenBytesPer100kOps.lib, 0)} / ${num(c.oldGenBytesPer100kOps.ours, 0)}`
          : "",
      ]),
    );
  },
});
