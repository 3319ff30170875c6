// The verification scenario's section of docs/benchmarks.md.
import { ms, num, table, verdict } from "../../lib/markdown.ts";
import { ratio } from "../../lib/stats.ts";
import type { VerifySettings } from "./common.ts";
import { renderFixedRate } from "./fixed-rate-render.ts";
import type { VerifyResult } from "./index.ts";

export function renderVerify(r: VerifyResult, s: VerifySettings): string {
  const out: string[] = [];
  out.push(
    table(
      ["target", "value:", ""],
      r.targets.map((t) => [
        t.name,
        typeof t.value === "boolean" ? String(t.value) : num(t.value, 3),
        verdict(t.met),
      ]),
    ),
  );
  const f = r["fixed-rate"];
  if (f) out.push(...renderFixedRate(f));
  const d = r.door;
  if (d) {
    const rows = [
      ["bare node:http", d.bareHttp.autocannon.rps, d.bareHttp.h2load.rps],
      ["Latchkey /v2 door (PGlite)", d.jsonDoor.autocannon.rps, d.jsonDoor.h2load.rps],
      ...(d.diagnosis
        ? [
            [
              "/v2 door, events dropped",
              d.diagnosis.eventsDropped.autocannon.rps,
              d.diagnosis.eventsDropped.h2load.rps,
            ],
            [
              "/v2 door on PostgreSQL",
              d.diagnosis.postgresql.autocannon.rps,
              d.diagnosis.postgresql.h2load.rps,
            ],
          ]
        : []),
      ["bare grpc-js", null, d.bareGrpc.rps],
      ["Latchkey gRPC port", null, d.grpcJs.rps],
    ];
    out.push(
      `Doors, closed loop (${s.seconds} s after ${s.warmupSeconds} s of warm-up; load and server share the cores; no target: the doors' targets are on their cost at a fixed rate):`,
      table(["server", "autocannon req/s:", "h2load req/s:"], rows),
      `Door over bare: /v2 ${num(ratio(d.jsonDoor.autocannon.rps, d.bareHttp.autocannon.rps))} (autocannon), ${num(ratio(d.jsonDoor.h2load.rps, d.bareHttp.h2load.rps))} (h2load); gRPC ${num(ratio(d.grpcJs.rps, d.bareGrpc.rps))}.`,
    );
  }
  const pr = r.propagation;
  if (pr) {
    out.push(
      `Propagation (PostgreSQL, two processes, ${pr.rounds} rounds): B answers DISABLED p50 ${ms(pr.afterUpdate.p50Ms, 1)}, p99 ${ms(pr.afterUpdate.p99Ms, 1)} after A's \`updateKey\` answered (${pr.firstPollAlreadyDisabled} rounds DISABLED at B's first poll; one poll ~${ms(pr.pollRoundTripP50Ms, 2)}).`,
    );
  }
  const c = r.credits;
  if (c) {
    out.push(
      `Credits (PostgreSQL, ${c.connections} connections on one key): ${num(c.withCredits.rps, 0)} req/s against ${num(c.withoutCredits.rps, 0)} without credits (${num(c.ratio)}); balance ${num(c.exactness.remainingInDb, 0)} = ${num(c.startCredits, 0)} − ${num(c.exactness.validAnswersCountedByServer, 0)} VALID answers: ${c.exactness.exact ? "exact" : "**not exact**"}.`,
    );
  }
  const sc = r.scale;
  if (sc) {
    out.push(
      `Cache off, ${num(s.scaleRate, 0)} req/s over random keys (PostgreSQL): p50 / p99 ${ms(sc.small.p50Ms, 3)} / ${ms(sc.small.p99Ms, 2)} among ${num(sc.small.keys, 0)} keys, ${ms(sc.large.p50Ms, 3)} / ${ms(sc.large.p99Ms, 2)} among ${num(sc.large.keys, 0)} (p50 ratio ${num(sc.p50Ratio)}).`,
    );
  }
  const m = r.memory;
  if (m) {
    const first = m.points[1];
    const last = m.points.at(-1);
    out.push(
      `Cache memory (\`CACHE_MAX_ENTRIES=${s.cacheMaxEntries}\`): heap after GC ${num(first?.heapUsedAfterGcMb ?? null, 1)} MB after ${num(first?.distinctKeys ?? null, 0)} distinct keys, ${num(last?.heapUsedAfterGcMb ?? null, 1)} MB after ${num(last?.distinctKeys ?? null, 0)} (x${num(m.heapGrowth)}; RSS x${num(m.rssGrowth)}); ~${num(m.approxBytesPerEntry, 0)} bytes of heap per cached record.`,
    );
  }
  const failed = Object.keys(r.errors);
  if (failed.length > 0) out.push(`Parts that failed in this run: ${failed.join(", ")}.`);
  return out.join("\n\n");
}
