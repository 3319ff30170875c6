// What the re-implementations of library internals buy on this Node: each operation timed the
// library's way and Latchkey's way, alternately, ROUNDS times (median ns per operation).
//
//   node --expose-gc bench/internals.mjs [headers] [values] [invoke] [histogram] [inflight] [nodelay]
//
// headers    a call's header bags: undici Headers (the request's six headers copied in, two
//            read, two empty response bags, one header set) vs LiteHeaders over Node's record
// values     context values holding the call, set then read: createContextValues vs callValues
// invoke     one unary call through two interceptors: Connect's createHandlerContext +
//            invokeUnaryImplementation (as its universal handler does) vs bindUnary
// histogram  one observation labelled procedure/door/status: prom-client Histogram vs CallHistogram
// inflight   add + remove with 64 in flight on a long-lived structure: Set vs Inflight, and the
//            old-generation bytes that churn leaves (GC off meanwhile: --expose-gc needed)
// nodelay    PostgreSQL (BENCH_DATABASE_URL): a 100-row COPY through postgres.js's own socket vs
//            noDelaySocket (ms per COPY)
//
// Environment: ROUNDS=5, N=1000000 (operations per round; COPYs: 20 per round).

import { create } from "@bufbuild/protobuf";
import { createContextKey, createContextValues, createHandlerContext } from "@connectrpc/connect";
import { invokeUnaryImplementation } from "@connectrpc/connect/protocol";
import postgres from "postgres";
import { Histogram, Registry } from "prom-client";
import { KeysService, VerifyKeyRequestSchema } from "../dist/gen/latchkey/v2/keys_pb.js";
import { CallHistogram } from "../dist/src/metrics.js";
import { Inflight } from "../dist/src/server/inflight.js";
import { bindUnary } from "../dist/src/server/invoke.js";
import { LiteHeaders } from "../dist/src/server/lite-headers.js";
import { callOf, callValues } from "../dist/src/services/call.js";
import { noDelaySocket } from "../dist/src/storage/postgres.js";

const ROUNDS = Number(process.env.ROUNDS ?? 5);
const N = Number(process.env.N ?? 1_000_000);
const median = (xs) => xs.toSorted((a, b) => a - b)[Math.floor((xs.length - 1) / 2)];
const r1 = (x) => Math.round(x * 10) / 10;
let sink = 0;

/** Median ns per operation of `lib` and `ours` (each `(n) => void | Promise`), alternated. */
async function ab(name, lib, ours, n = N) {
  await lib(Math.min(n, 20_000));
  await ours(Math.min(n, 20_000));
  const t = { lib: [], ours: [] };
  for (let r = 0; r < ROUNDS; r++) {
    for (const [k, fn] of [
      ["lib", lib],
      ["ours", ours],
    ]) {
      const t0 = process.hrtime.bigint();
      await fn(n);
      t[k].push(Number(process.hrtime.bigint() - t0) / n);
    }
  }
  const out = { name, libNs: r1(median(t.lib)), oursNs: r1(median(t.ours)) };
  out.savedNs = r1(out.libNs - out.oursNs);
  out.spread = { lib: t.lib.map(r1), ours: t.ours.map(r1) };
  console.log(JSON.stringify(out));
  return out;
}

const nodeRecord = () => ({
  host: "127.0.0.1:8080",
  "content-type": "application/json",
  "content-length": "44",
  authorization: "Bearer bench_root_key_0123456789abcdef",
  "user-agent": "bench/1.0",
  accept: "*/*",
});

const parts = {
  headers: () =>
    ab(
      "headers",
      (n) => {
        for (let i = 0; i < n; i++) {
          const raw = nodeRecord();
          const req = new Headers();
          for (const k in raw) req.append(k, raw[k]);
          const h = new Headers();
          const t = new Headers();
          h.set("content-type", "application/json");
          sink += (req.get("authorization")?.length ?? 0) + (req.get("content-type")?.length ?? 0);
          sink += t.has("x") ? 1 : 0;
        }
      },
      (n) => {
        for (let i = 0; i < n; i++) {
          const raw = nodeRecord();
          const req = LiteHeaders.fromNode(raw);
          const h = new LiteHeaders();
          const t = new LiteHeaders();
          h.set("content-type", "application/json");
          sink += (req.get("authorization")?.length ?? 0) + (req.get("content-type")?.length ?? 0);
          sink += t.isEmpty() ? 1 : 0;
        }
      },
    ),
  values: () => {
    const key = createContextKey(undefined, { description: "call" });
    const call = { door: "json" };
    return ab(
      "values",
      (n) => {
        for (let i = 0; i < n; i++) {
          const v = createContextValues().set(key, call);
          sink += v.get(key) === call ? 1 : 0;
        }
      },
      (n) => {
        for (let i = 0; i < n; i++) {
          const v = callValues(call);
          sink += callOf(v) === call ? 1 : 0;
        }
      },
    );
  },
  invoke: () => {
    const method = KeysService.method.verifyKey;
    const spec = {
      kind: "unary",
      method,
      impl: async (req, ctx) => {
        ctx.responseHeader.set("x-id", "1");
        sink += req.key.length + (ctx.requestHeader.get("authorization")?.length ?? 0);
        return { valid: true };
      },
    };
    const pass = (next) => (req) => next(req);
    const interceptors = [pass, pass];
    const input = create(VerifyKeyRequestSchema, { key: "k_0123456789" });
    const bound = bindUnary(spec, interceptors);
    return ab(
      "invoke",
      async (n) => {
        for (let i = 0; i < n; i++) {
          const raw = nodeRecord();
          const requestHeader = new Headers();
          for (const k in raw) requestHeader.append(k, raw[k]);
          const ctx = createHandlerContext({
            service: method.parent,
            method,
            protocolName: "connect",
            requestMethod: "POST",
            url: "http://127.0.0.1/latchkey.v2.KeysService/VerifyKey",
            requestHeader,
            contextValues: createContextValues(),
          });
          const m = await invokeUnaryImplementation(spec, ctx, input, interceptors);
          sink += m.valid ? 1 : 0;
        }
      },
      async (n) => {
        for (let i = 0; i < n; i++) {
          const call = {
            protocolName: "connect",
            requestMethod: "POST",
            url: "http://127.0.0.1/latchkey.v2.KeysService/VerifyKey",
            header: LiteHeaders.fromNode(nodeRecord()),
            values: createContextValues(),
          };
          const r = await bound(call, input);
          sink += r.message.valid ? 1 : 0;
        }
      },
    );
  },
  histogram: () => {
    const buckets = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];
    const h = new Histogram({
      name: "h",
      help: "h",
      labelNames: ["procedure", "door", "status"],
      buckets,
      registers: [new Registry()],
    });
    const ours = new CallHistogram("c", "c", buckets);
    return ab(
      "histogram",
      (n) => {
        for (let i = 0; i < n; i++) {
          h.observe({ procedure: "keys.verifyKey", door: "json", status: 200 }, 0.0003);
        }
      },
      (n) => {
        for (let i = 0; i < n; i++) ours.observe("keys.verifyKey", "json", 200, 0.0003);
      },
    );
  },
  inflight: async () => {
    const set = new Set();
    const list = new Inflight();
    const churn = (add, remove) => (n) => {
      const ring = new Array(64);
      for (let i = 0; i < 64; i++) ring[i] = add({ i });
      for (let i = 0; i < n; i++) {
        remove(ring[i & 63]);
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
    const out = await ab("inflight", libFn, oursFn);
    if (typeof globalThis.gc === "function") {
      const { getHeapSpaceStatistics } = await import("node:v8");
      const old = () =>
        getHeapSpaceStatistics().find((s) => s.space_name === "old_space").space_used_size;
      const oldBytes = (fn) => {
        gc();
        gc();
        const a = old();
        fn(100_000);
        const b = old();
        return b - a;
      };
      out.oldGenBytesPer100kOps = { set: oldBytes(libFn), inflight: oldBytes(oursFn) };
      console.log(JSON.stringify(out.oldGenBytesPer100kOps));
    }
    return out;
  },
  nodelay: async () => {
    const url = process.env.BENCH_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";
    const plain = postgres(url, { max: 1, onnotice: () => {} });
    const fast = postgres(url, { max: 1, onnotice: () => {}, socket: noDelaySocket() });
    const table = `bench_nodelay_${process.pid}`;
    await plain.unsafe(`create table ${table} (a int, b text)`);
    const rows = Array.from({ length: 100 }, (_, i) => `${i}\tverification event ${i}\n`).join("");
    const copies = (sql) => async (n) => {
      for (let i = 0; i < n; i++) {
        const w = await sql.unsafe(`copy ${table} (a, b) from stdin`).writable();
        await new Promise((resolve, reject) => {
          w.on("finish", resolve);
          w.on("error", reject);
          w.end(rows);
        });
      }
    };
    try {
      const out = await ab("nodelay (ns per COPY)", copies(plain), copies(fast), 20);
      return out;
    } finally {
      await plain.unsafe(`drop table ${table}`);
      await plain.end();
      await fast.end();
    }
  },
};

const chosen = process.argv.slice(2).filter((p) => p in parts);
const results = [];
for (const p of chosen.length ? chosen : Object.keys(parts)) results.push(await parts[p]());
console.log(`node ${process.version}; sink ${sink > 0}`);
