// Many keys, seeded with COPY into one PostgreSQL database shared by two parts:
//   scale   cache off (CACHE_TTL_MS=0), a fixed rate over random keys among a few thousand and
//           then among many: does a miss cost more when the table is large?
//   memory  cache on and bounded (CACHE_MAX_ENTRIES), many distinct keys verified (closed
//           loop): the heap after a forced GC at every fifth of the way must stay bounded.
import { createHash } from "node:crypto";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { answersBetween, call, metricsOf, verify } from "../../lib/api.ts";
import { createDatabase, type Database, dropDatabase, withSql } from "../../lib/database.ts";
import { type OpenResult, spawnLoad } from "../../lib/load/open-loop.ts";
import { heapAfterGc, type ProfileSummary, printProfile, profileWhile } from "../../lib/profile.ts";
import { measureQuietly } from "../../lib/quiet.ts";
import { type Latchkey, withLatchkey } from "../../lib/server.ts";
import { ratio, round } from "../../lib/stats.ts";
import type { VerifyContext } from "./common.ts";

export const SCALE_TARGET = 3;
export const MEMORY_GROWTH_TARGET = 1.5;
const SECRET_PREFIX = "bench_";

/** The seeded database: its keys are `bench_0` .. `bench_<count - 1>` in one API. */
export interface Seeded extends Database {
  count: number;
  apiId?: string;
  workspaceId?: string;
}

export async function seededDatabase(): Promise<Seeded> {
  return { ...(await createDatabase("verify_keys")), count: 0 };
}

export const dropSeeded = (db: Seeded) => dropDatabase(db.name);

async function ensureApi(db: Seeded, base: string): Promise<void> {
  if (db.apiId) return;
  db.apiId = (await call(base, "apis.createApi", { name: "bench many keys" })).apiId;
  db.workspaceId = await withSql(db.url, async (sql) => {
    const [row] = await sql`select workspace_id from apis where id = ${db.apiId ?? ""}`;
    return String(row?.workspace_id);
  });
}

/** Adds keys up to `upTo` with COPY; returns the seconds it took. */
async function seedUpTo(db: Seeded, upTo: number): Promise<number> {
  if (db.count >= upTo) return 0;
  const t0 = performance.now();
  const now = Date.now();
  const from = db.count;
  function* lines() {
    for (let s = from; s < upTo; s += 10_000) {
      let text = "";
      for (let i = s; i < Math.min(upTo, s + 10_000); i++) {
        const secret = `${SECRET_PREFIX}${i}`;
        const hash = createHash("sha256").update(secret, "utf8").digest("base64");
        const id = `key_b${String(i).padStart(15, "0")}`;
        text += `${id}\t${db.workspaceId}\t${db.apiId}\t${hash}\t${secret.slice(0, 10)}\tbench\tt\t${now}\n`;
      }
      yield text;
    }
  }
  await withSql(db.url, async (sql) => {
    const stream =
      await sql`copy keys (id, workspace_id, api_id, hash, start, prefix, enabled, created_at) from stdin`.writable();
    await pipeline(Readable.from(lines()), stream);
    await sql`vacuum (analyze) keys`;
    await sql`checkpoint`;
  });
  db.count = upTo;
  const seconds = round((performance.now() - t0) / 1000, 1);
  console.log(`seeded keys ${from}..${upTo - 1} with COPY in ${seconds} s`);
  return seconds;
}

export interface ScaleRun extends OpenResult {
  keys: number;
  seedSeconds: number;
}

export interface ScaleResult {
  small: ScaleRun;
  large: ScaleRun;
  p50Ratio: number | null;
  p99Ratio: number | null;
}

export async function scalePart(context: VerifyContext, db: Seeded): Promise<ScaleResult> {
  const s = context.settings;
  return withLatchkey({ databaseUrl: db.url, env: { CACHE_TTL_MS: "0" } }, async (lk) => {
    await ensureApi(db, lk.base);
    const run = async (count: number): Promise<ScaleRun> => {
      const seedSeconds = await seedUpTo(db, count);
      const probe = Math.floor(Math.random() * count);
      const v = await verify(lk.base, `${SECRET_PREFIX}${probe}`);
      context.check(v.code === "VALID", `scale: key ${probe} of ${count}: ${v.code}`);
      const before = await metricsOf(lk.admin);
      const r = await measureQuietly(context.quiet, () =>
        spawnLoad({
          mode: "open",
          url: `${lk.base}/v2/keys.verifyKey`,
          rate: s.scaleRate,
          seconds: s.scaleSeconds,
          warmupSeconds: context.quick ? 1 : 5,
          keys: { prefix: SECRET_PREFIX, from: 0, count },
          expectCode: "VALID",
        }),
      );
      answersBetween(`scale ${count}`, before, await metricsOf(lk.admin), context.check);
      context.check(r.lost === 0 && r.unexpectedCodes === 0, `scale ${count}: ${r.lost} lost`);
      console.log(
        `${count} keys, cache off, ${s.scaleRate} req/s: p50 ${r.p50Ms} p99 ${r.p99Ms} ms`,
      );
      return { keys: count, seedSeconds, ...r };
    };
    const small = await run(s.smallKeys);
    const large = await run(s.scaleKeys);
    return {
      small,
      large,
      p50Ratio: ratio(large.p50Ms, small.p50Ms),
      p99Ratio: ratio(large.p99Ms, small.p99Ms),
    };
  });
}

export interface MemoryPoint {
  distinctKeys: number;
  heapUsedAfterGcMb: number;
  rssMb: number;
  loadRps?: number;
}

export interface MemoryResult {
  points: MemoryPoint[];
  codes: Record<string, number>;
  /** Heap after GC at the end over at the first fifth, while distinct keys grew `keysGrowth`. */
  heapGrowth: number | null;
  keysGrowth: number | null;
  rssGrowth: number | null;
  approxBytesPerEntry: number;
  /** The last fifth with the CPU profiler on: where a miss's time goes once the cache is full. */
  profileLastStep: ProfileSummary;
}

async function point(lk: Latchkey, distinctKeys: number, loadRps?: number): Promise<MemoryPoint> {
  const heap = await heapAfterGc(lk.inspector);
  const m = await metricsOf(lk.admin);
  const p = {
    distinctKeys,
    heapUsedAfterGcMb: round(heap / 2 ** 20, 1),
    rssMb: round((m.values.process_resident_memory_bytes ?? 0) / 2 ** 20, 1),
    ...(loadRps === undefined ? {} : { loadRps }),
  };
  console.log(
    `after ${distinctKeys} distinct keys: heap ${p.heapUsedAfterGcMb} MB after GC, RSS ${p.rssMb} MB`,
  );
  return p;
}

export async function memoryPart(context: VerifyContext, db: Seeded): Promise<MemoryResult> {
  const s = context.settings;
  const env = { CACHE_TTL_MS: "30000", CACHE_MAX_ENTRIES: String(s.cacheMaxEntries) };
  return withLatchkey({ databaseUrl: db.url, env, inspect: true }, async (lk) => {
    await ensureApi(db, lk.base);
    await seedUpTo(db, s.memoryKeys);
    const points = [await point(lk, 0)];
    const step = Math.ceil(s.memoryKeys / 5);
    const codes: Record<string, number> = {};
    let profileLastStep: ProfileSummary = { busyMs: 0, sampledMs: 0, top: [], byModule: [] };
    for (let from = 0; from < s.memoryKeys; from += step) {
      const total = Math.min(step, s.memoryKeys - from);
      const load = () =>
        spawnLoad({
          mode: "closed",
          url: `${lk.base}/v2/keys.verifyKey`,
          concurrency: 32,
          total,
          keys: { prefix: SECRET_PREFIX, from },
          expectCode: "VALID",
        });
      let r: Awaited<ReturnType<typeof load>>;
      if (from + step < s.memoryKeys) r = await load();
      else {
        const profiled = await profileWhile(lk.inspector, load, 1000);
        r = profiled.value;
        profileLastStep = profiled.profile;
        printProfile("the last fifth", profileLastStep);
      }
      for (const [k, n] of Object.entries(r.codes)) codes[k] = (codes[k] ?? 0) + n;
      context.check(
        r.unexpectedCodes === 0 && r.errors === 0 && r.non2xx === 0,
        `memory: ${JSON.stringify(r)}`,
      );
      points.push(await point(lk, from + total, r.rps));
    }
    const [start, first] = points;
    const last = points.at(-1);
    const entries = Math.min(first?.distinctKeys ?? 0, s.cacheMaxEntries);
    return {
      points,
      codes,
      heapGrowth: ratio(last?.heapUsedAfterGcMb, first?.heapUsedAfterGcMb),
      keysGrowth: ratio(last?.distinctKeys, first?.distinctKeys),
      rssGrowth: ratio(last?.rssMb, first?.rssMb),
      approxBytesPerEntry: Math.round(
        (((first?.heapUsedAfterGcMb ?? 0) - (start?.heapUsedAfterGcMb ?? 0)) * 2 ** 20) /
          Math.max(1, entries),
      ),
      profileLastStep,
    };
  });
}
