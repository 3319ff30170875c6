// The verification scenario's section of docs/benchmarks.md.
import type { FixedRateResult } from "../../lib/load/open-loop.ts";
import { ms, num, table, verdict } from "../../lib/markdown.ts";
import type { VerifySettings } from "./common.ts";
import type { VerifyResult } from "./index.ts";

function fixedRateRows(r: NonNullable<VerifyResult["fixed-rate"]>) {
  const row = (label: string, x: FixedRateResult) => [
    label,
    ms(x.p50Ms, 3),
    ms(x.p90Ms, 3),
    ms(x.p99Ms, 3),
    ms(x.p999Ms, 3),
    ms(x.maxMs, 1),
    num(x.achievedRate, 0),
    `${num(x.server.cpuUsPerRequest, 0)} us`,
    x.server.postgresCpuUsPerRequest === undefined
      ? "–"
      : `${num(x.server.postgresCpuUsPerRequest, 0)} us`,
    num(x.server.involuntarySwitches, 0),
  ];
  const rows = [
    row("bare node:http", r.bareHttp),
    row("Latchkey, PGlite", r.pglite),
    row("Latchkey, PostgreSQL", r.postgresql),
  ];
  if (r.diagnosis) {
    rows.push(row("PGlite, events dropped", r.diagnosis.eventsDropped));
    rows.push(row("PGlite, flush every 100 ms", r.diagnosis.flushEvery100ms));
  }
  return rows;
}

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
  if (f) {
    const p = f.preemption;
    out.push(
      `Fixed rate: ${num(f.rate, 0)} req/s evenly spaced for ${f.seconds} s after a 5 s warm-up, open loop, keep-alive connections (${f.pinning}); latency from the scheduled send time; CPU per request read from \`/proc\` (the server's every thread; PostgreSQL's backends apart):`,
      table(
        [
          "server",
          "p50:",
          "p90:",
          "p99:",
          "p99.9:",
          "max:",
          "achieved req/s:",
          "server CPU / request:",
          "PostgreSQL CPU / request:",
          "preempted:",
        ],
        fixedRateRows(f),
      ),
      `Bare CPU per request over Latchkey's: ${num(f.cpuRatio.pglite)} on PGlite, ${num(f.cpuRatio.postgresql)} on PostgreSQL (server process only). A process spinning on the server's core lost it ${num(p.gapsOverMs["1"] ?? null, 0)} times for over 1 ms and ${num(p.gapsOverMs["2"] ?? null, 0)} times for over 2 ms in ${p.seconds} s (longest ${ms(p.maxGapMs, 1)}).`,
    );
  }
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
      ["Latchkey grpc-js door", null, d.grpcJs.rps],
    ];
    out.push(
      `Doors, closed loop (${s.seconds} s after ${s.warmupSeconds} s of warm-up; load and server share the cores):`,
      table(["server", "autocannon req/s:", "h2load req/s:"], rows),
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
