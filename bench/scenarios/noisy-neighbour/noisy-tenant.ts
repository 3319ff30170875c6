// The noisy tenant of the noisy-neighbour scenario, in a worker thread of its own so that
// building and reading its large bodies does not delay the quiet tenant's timings: it builds
// its bodies, says "ready", loops over the heaviest requests the API allows from several
// connections until the phase ends, and posts its answers' counts by kind and status.
import { randomBytes } from "node:crypto";
import { parentPort, workerData } from "node:worker_threads";
import { post } from "../../lib/api.ts";

export interface NoisyTenantData {
  base: string;
  key: string;
  apiId: string;
  roles: string[];
  seconds: number;
  connections: number;
  kinds: string[];
}

const MAX_BODY = 1024 * 1024;
const VALUES = (n: number) => `(values ${Array.from({ length: n }, (_, i) => `(${i})`).join(",")})`;

/** Analytics queries built to be as costly as the guard lets them. */
export const HOSTILE_QUERIES = [
  // 20 MB of rows, against a 10 MiB result cap.
  `select lpad('', 100000, 'x') as x from ${VALUES(200)} as v(n)`,
  // One row of 11 MB.
  "select lpad('', 11000000, 'x') as x",
  // A string_agg of 90 MB in one group.
  `select string_agg(lpad('', 1000, 'y'), ',') as s from ${VALUES(300)} as a(n), ${VALUES(300)} as b(n)`,
  // An array_agg of 8 million elements.
  `select array_agg(a.n * b.n * c.n) as a from ${VALUES(200)} as a(n), ${VALUES(200)} as b(n), ${VALUES(200)} as c(n)`,
  // A cross join of 1.6 billion rows: runs until the analytics timeout.
  `select count(*) as n from ${VALUES(200)} as a(n), ${VALUES(200)} as b(n), ${VALUES(200)} as c(n), ${VALUES(200)} as d(n)`,
];

/** The heaviest bodies the API accepts (within the 1 MiB body limit). */
function heavyBodies(apiId: string, roles: string[]) {
  const permissions = Array.from({ length: 1000 }, (_, i) => `p${String(i).padStart(3, "0")}`);
  const ratelimits = Array.from({ length: 50 }, (_, i) => ({
    name: `limit_${i}`,
    limit: 100,
    duration: 60_000,
  }));
  const meta = Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`k${i}`, i]));
  // Each migration's hashes are new (a taken hash is only reported): built before the load.
  const migrations = Array.from({ length: 60 }, () => {
    const keys = Array.from({ length: 100 }, () => ({
      hash: randomBytes(32).toString("hex"),
      permissions,
      roles,
      ratelimits: ratelimits.slice(0, 2),
    }));
    const body = JSON.stringify({ migrationId: "noisy", apiId, keys });
    if (body.length > MAX_BODY) throw new Error(`migrateKeys body of ${body.length} bytes`);
    return body;
  });
  let next = 0;
  return {
    migrate: () => migrations[next++ % migrations.length] ?? "",
    createKey: JSON.stringify({ apiId, permissions, roles, ratelimits, meta }),
  };
}

/** One loop; a request still unanswered when the phase ends is abandoned (and counted). */
async function loop(
  d: NoisyTenantData,
  bodies: ReturnType<typeof heavyBodies>,
  until: number,
  counts: Record<string, number>,
  offset: number,
) {
  const signal = AbortSignal.timeout(Math.max(1, until - Date.now()));
  for (let i = offset; Date.now() < until; i++) {
    const kind = d.kinds[i % d.kinds.length] ?? "analytics";
    let status: number | string;
    try {
      const options = { key: d.key, signal };
      if (kind === "migrateKeys")
        status = (await post(d.base, "keys.migrateKeys", bodies.migrate(), options)).status;
      else if (kind === "createKey")
        status = (await post(d.base, "keys.createKey", bodies.createKey, options)).status;
      else {
        const query = HOSTILE_QUERIES[Math.floor(i / d.kinds.length) % HOSTILE_QUERIES.length];
        status = (await post(d.base, "analytics.getVerifications", { query }, options)).status;
      }
    } catch {
      status = "unanswered at the end";
    }
    const k = `${kind} ${status}`;
    counts[k] = (counts[k] ?? 0) + 1;
  }
}

if (parentPort && workerData) {
  const d = workerData as NoisyTenantData;
  const bodies = heavyBodies(d.apiId, d.roles);
  parentPort.postMessage("ready");
  const until = Date.now() + d.seconds * 1000;
  const counts: Record<string, number> = {};
  await Promise.all(
    Array.from({ length: d.connections }, (_, i) => loop(d, bodies, until, counts, i)),
  );
  parentPort.postMessage(counts);
}
