// What charging exactly once costs: keys.verifyKey with credits on PostgreSQL at a fixed rate,
// plain (the key's own balance, no idempotencyKey) against idempotent (a fresh idempotencyKey
// on every call, the key's balance and its identity's pool both charged). Both send the root
// key (an idempotent verification needs one), both on a freshly started server pinned to core
// 0 with the generator on core 1, as the verify scenario's fixed-rate part does. CPU per
// request from /proc over the measured window: the server process and its PostgreSQL
// backends. After each run the balances must be exactly the start minus the VALID answers.
//
//   npm run bench -- credits-once     BENCH_RATE=1000 BENCH_FIXED_RATE_SECONDS=30
//                                     BENCH_WARMUP_SECONDS=15 BENCH_ROUNDS=2
import { authorization, call, ROOT_KEY } from "../lib/api.ts";
import { withDatabase, withSql } from "../lib/database.ts";
import { type FixedRateResult, fixedRateOn } from "../lib/load/open-loop.ts";
import { ms, num, table, verdict } from "../lib/markdown.ts";
import { defineScenario, noArgs, setting } from "../lib/scenario.ts";
import { withLatchkey } from "../lib/server.ts";
import { median, ratio } from "../lib/stats.ts";
import { GENERATOR_CPU, SERVER_CPU } from "./verify/fixed-rate.ts";

const START = 100_000_000;
/** Idempotent over plain, CPU per request (server and backends): at most this. */
export const CREDITS_ONCE_TARGET = 1.5;

export interface CreditsOnceSettings {
  rate: number;
  seconds: number;
  warmupSeconds: number;
  rounds: number;
}

type Mode = "plain" | "idempotent";

interface Run {
  mode: Mode;
  round: number;
  r: FixedRateResult;
  /** Server + backends, µs per request. */
  cpuUs: number;
  valid: number;
  keyLeft: number;
  poolLeft: number | null;
  exact: boolean;
}

export interface CreditsOnceResult {
  runs: Run[];
  /** Idempotent over plain, per round. */
  ratios: number[];
}

async function measure(
  s: CreditsOnceSettings,
  mode: Mode,
  round: number,
  check: (ok: boolean, problem: string) => boolean,
): Promise<Run> {
  return withDatabase("credits-once", (db) =>
    withLatchkey({ databaseUrl: db.url, cpu: SERVER_CPU }, async (lk) => {
      const apiId = (await call(lk.base, "apis.createApi", { name: "credits-once" })).apiId;
      const pooled = mode === "idempotent";
      const externalId = `bench-${round}`;
      if (pooled) {
        await call(lk.base, "identities.createIdentity", {
          externalId,
          credits: { remaining: START },
        });
      }
      const created = await call(lk.base, "keys.createKey", {
        apiId,
        credits: { remaining: START },
        ...(pooled ? { externalId } : {}),
      });
      const stamp = Date.now().toString(36);
      const body = { key: created.key, credits: { cost: 1 } };
      const target = pooled
        ? { bodyEach: JSON.stringify({ ...body, idempotencyKey: `${stamp}-%i` }) }
        : { body: JSON.stringify(body) };
      const r = await fixedRateOn(
        lk.pid,
        {
          mode: "open",
          url: `${lk.base}/v2/keys.verifyKey`,
          headers: authorization(ROOT_KEY),
          ...target,
          rate: s.rate,
          seconds: s.seconds,
          warmupSeconds: s.warmupSeconds,
          expectCode: "VALID",
          maxSockets: 50,
        },
        { cpu: GENERATOR_CPU, databases: [db.name] },
      );
      const label = `round ${round}, ${mode}`;
      check(
        r.lost === 0 && r.non2xx === 0 && r.errors === 0 && r.unexpectedCodes === 0,
        `${label}: ${r.lost} lost, ${r.non2xx + r.errors} failed, ${r.unexpectedCodes} not VALID`,
      );
      const valid = r.codes.VALID ?? 0;
      const left = await withSql(db.url, async (sql) => {
        const [key] = await sql`select remaining from keys where id = ${created.keyId}`;
        const [pool] = pooled
          ? await sql`select remaining from identities where external_id = ${externalId}`
          : [];
        return { key: Number(key?.remaining), pool: pool ? Number(pool.remaining) : null };
      });
      const exact = left.key === START - valid && (!pooled || left.pool === START - valid);
      check(
        exact,
        `${label}: balances ${left.key} / ${left.pool} after ${valid} VALID from ${START}`,
      );
      const cpuUs = r.server.cpuUsPerRequest + (r.server.postgresCpuUsPerRequest ?? 0);
      console.log(
        `${label}: ${s.rate}/s p50 ${r.p50Ms} p99 ${r.p99Ms} ms; server ${r.server.cpuUsPerRequest} us` +
          ` + PostgreSQL ${r.server.postgresCpuUsPerRequest} us per request; exact ${exact}`,
      );
      return { mode, round, r, cpuUs, valid, keyLeft: left.key, poolLeft: left.pool, exact };
    }),
  );
}

export default defineScenario<CreditsOnceSettings, CreditsOnceResult>({
  name: "credits-once",
  description:
    "keys.verifyKey with credits at a fixed rate on PostgreSQL: idempotent with an identity pool against plain",
  settings: ({ quick, args }) => {
    noArgs("credits-once", args);
    return {
      rate: setting("BENCH_RATE", 1000, 300, quick),
      seconds: setting("BENCH_FIXED_RATE_SECONDS", 30, 3, quick),
      warmupSeconds: setting("BENCH_WARMUP_SECONDS", 15, 2, quick),
      rounds: setting("BENCH_ROUNDS", 2, 1, quick),
    };
  },
  async run({ settings: s, check }) {
    const runs: Run[] = [];
    const ratios: number[] = [];
    for (let round = 1; round <= s.rounds; round++) {
      const plain = await measure(s, "plain", round, check);
      const idempotent = await measure(s, "idempotent", round, check);
      runs.push(plain, idempotent);
      ratios.push(ratio(idempotent.cpuUs, plain.cpuUs) ?? Number.NaN);
    }
    return { runs, ratios };
  },
  render(r, s) {
    const m = median(r.ratios);
    return [
      `${num(s.rate, 0)} verifications a second for ${s.seconds} s after ${s.warmupSeconds} s of warm-up, ${s.rounds} round(s), each run on a freshly started server (taskset -c ${SERVER_CPU}; generator -c ${GENERATOR_CPU}) and database; the root key sent with every call.`,
      "",
      table(
        ["target", "value", ""],
        [
          [
            `idempotent with a pool over plain, CPU per request (server + PostgreSQL) <= ${CREDITS_ONCE_TARGET}`,
            num(m),
            verdict(m <= CREDITS_ONCE_TARGET),
          ],
          [
            "balances exact in every run",
            String(r.runs.every((x) => x.exact)),
            verdict(r.runs.every((x) => x.exact)),
          ],
        ],
      ),
      "",
      table(
        [
          "round",
          "verification",
          "server CPU / request",
          "PostgreSQL CPU / request",
          "p50",
          "p99",
          "VALID",
          "key / pool left",
        ],
        r.runs.map((x) => [
          x.round,
          x.mode === "plain"
            ? "plain: key credits, no idempotencyKey"
            : "idempotent: a new idempotencyKey per call, key credits and an identity pool",
          `${num(x.r.server.cpuUsPerRequest, 0)} µs`,
          `${num(x.r.server.postgresCpuUsPerRequest ?? 0, 0)} µs`,
          ms(x.r.p50Ms),
          ms(x.r.p99Ms),
          num(x.valid, 0),
          `${num(x.keyLeft, 0)} / ${x.poolLeft === null ? "–" : num(x.poolLeft, 0)}`,
        ]),
      ),
      "",
      `Idempotent over plain per round: ${r.ratios.map((x) => num(x)).join(", ")}.`,
    ].join("\n");
  },
});
