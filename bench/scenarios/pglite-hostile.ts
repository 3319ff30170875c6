// What one hostile analytics query on the embedded database (PGlite) does to a cached
// verifyKey. A key is verified once (cached), then verified one call after another: alone, then
// while a tenant's analytics query cross-joins VALUES lists (no table, no function: the guard
// lets it through) until the analytics timeout. Then how long the next write waited (for the
// database to be reopened, if it was).
import { call, post, verify } from "../lib/api.ts";
import { ms, num, table } from "../lib/markdown.ts";
import { defineScenario, noArgs, setting } from "../lib/scenario.ts";
import { type Latchkey, withLatchkey } from "../lib/server.ts";
import { type LatencySummary, summarize } from "../lib/stats.ts";

export interface HostileSettings {
  quietSeconds: number;
  /** VALUES lists of ten rows cross-joined: 10^n rows. */
  valuesLists: number;
  /** More settings of the server, as JSON in LATCHKEY_ENV. */
  serverEnv: Record<string, string>;
}

export interface HostileResult {
  quiet: LatencySummary;
  duringHostile: LatencySummary;
  hostile: { afterMs: number; status: number; code: string | null };
  createKeyAfter: { status: number; ms: number };
}

const TEN = "(values (1),(2),(3),(4),(5),(6),(7),(8),(9),(10))";

/** Verifies `key` one call after another until `until()` says so. */
async function verifyLoop(
  lk: Latchkey,
  key: string,
  until: () => boolean,
): Promise<LatencySummary> {
  const times: number[] = [];
  while (!until()) {
    const t = performance.now();
    const v = await verify(lk.base, key);
    if (v.valid !== true) throw new Error(`verifyKey: ${JSON.stringify(v)}`);
    times.push(performance.now() - t);
  }
  return summarize(times, 2);
}

export default defineScenario<HostileSettings, HostileResult>({
  name: "pglite-hostile",
  description: "a cached verifyKey while a hostile analytics query runs on PGlite",
  settings: ({ quick, args }) => {
    noArgs("pglite-hostile", args);
    return {
      quietSeconds: setting("BENCH_SECONDS", 3, 1, quick),
      valuesLists: setting("BENCH_HOSTILE_VALUES", 7, 7, quick),
      serverEnv: JSON.parse(process.env.LATCHKEY_ENV ?? "{}"),
    };
  },
  run: ({ settings: s }) =>
    withLatchkey({ env: s.serverEnv }, async (lk) => {
      const { apiId } = await call(lk.base, "apis.createApi", { name: "bench" });
      const { key } = await call(lk.base, "keys.createKey", { apiId });
      await verify(lk.base, key);
      const quietEnd = performance.now() + s.quietSeconds * 1000;
      const quiet = await verifyLoop(lk, key, () => performance.now() > quietEnd);
      const lists = Array.from({ length: s.valuesLists }, (_, i) => `${TEN} as v${i}(n)`);
      let hostile: HostileResult["hostile"] | undefined;
      const started = performance.now();
      const query = post(lk.base, "analytics.getVerifications", {
        query: `select count(*) from ${lists.join(", ")}`,
      }).then((r) => {
        hostile = {
          afterMs: Math.round(performance.now() - started),
          status: r.status,
          code: r.body.error?.code ?? null,
        };
      });
      const duringHostile = await verifyLoop(lk, key, () => hostile !== undefined);
      await query;
      const t = performance.now();
      const after = await post(lk.base, "keys.createKey", { apiId });
      const out = {
        quiet,
        duringHostile,
        hostile: hostile ?? { afterMs: 0, status: 0, code: null },
        createKeyAfter: { status: after.status, ms: Math.round(performance.now() - t) },
      };
      console.log(JSON.stringify(out, null, 2));
      return out;
    }),
  render: (r, s) =>
    [
      table(
        ["cached verifyKey, one call after another", "calls:", "p50:", "p99:", "max:"],
        [
          ["alone", r.quiet.count, ms(r.quiet.p50Ms), ms(r.quiet.p99Ms), ms(r.quiet.maxMs)],
          [
            "during the hostile query",
            r.duringHostile.count,
            ms(r.duringHostile.p50Ms),
            ms(r.duringHostile.p99Ms),
            ms(r.duringHostile.maxMs),
          ],
        ],
      ),
      `The hostile query (10^${s.valuesLists} rows) was answered ${r.hostile.status}${r.hostile.code ? ` \`${r.hostile.code}\`` : ""} after ${num(r.hostile.afterMs / 1000, 1)} s; the next write (\`createKey\`, ${r.createKeyAfter.status}) took ${ms(r.createKeyAfter.ms, 0)}.`,
    ].join("\n\n"),
});
