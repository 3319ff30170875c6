import type { RedisLimiter } from "../ratelimit/redis.js";
import type { Db } from "../storage/db.js";
import { type ReadinessCheck, ReadinessFailure } from "./readiness.js";

/**
 * The database answers, and holds at least the `migrations` this Latchkey knows (a newer
 * node may have applied more): one indexed read of the migrations table. Fails as
 * `database` when the query fails, as `migrations` when the schema is behind.
 */
export function databaseCheck(db: Db, migrations: number): ReadinessCheck {
  return {
    name: "database",
    async probe() {
      const rows = await db.query<{ version: number | null }>(
        "select max(version) as version from schema_migrations",
      );
      const version = rows[0]?.version ?? 0;
      if (version < migrations) {
        throw new ReadinessFailure(
          "migrations",
          `the database is at migration ${version}; this Latchkey needs ${migrations}`,
        );
      }
    },
  };
}

/** Redis answers a PING (it holds the rate-limit counters shared by every node). */
export function redisCheck(redis: Pick<RedisLimiter, "ping">): ReadinessCheck {
  return { name: "redis", probe: () => redis.ping() };
}
