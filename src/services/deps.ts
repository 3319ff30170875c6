import type { EventBuffer } from "../analytics/event-buffer.js";
import type { InvalidationBus } from "../cache/bus.js";
import type { Caches } from "../cache/caches.js";
import type { SoleWorkspace } from "../cache/sole-workspace.js";
import type { Config } from "../config.js";
import type { Clock } from "../domain/clock.js";
import type { Logger } from "../log.js";
import type { Metrics } from "../metrics.js";
import type { Limiter } from "../ratelimit/limiter.js";
import type { CreditSpender } from "../storage/credit-spender.js";
import type { Db } from "../storage/db.js";
import type { RatelimitNotices } from "../webhooks/ratelimit-notices.js";
import type { EnvironmentRootKey } from "./environment-root-key.js";
import type { ServerSlots } from "./workspace-slots.js";

/** What every procedure may use: one instance per server. */
export interface Deps {
  db: Db;
  /** Where analytics queries run: a pool of its own on PostgreSQL, `db` itself on PGlite. */
  analyticsDb: Db;
  clock: Clock;
  bus: InvalidationBus;
  caches: Caches;
  /** The instance's only workspace while it holds just one (scopes header-less verification). */
  soleWorkspace: SoleWorkspace;
  log: Logger;
  config: Config;
  metrics: Metrics;
  limiter: Limiter;
  credits: CreditSpender;
  events: EventBuffer;
  /** The quoted schema of Latchkey's tables, for analytics statements. */
  analyticsSchema: string;
  /** What each workspace may run at once on this node, per kind of heavy request. */
  slots: ServerSlots;
  /** This node's webhook dispatcher: woken when a change wrote deliveries (absent in tools). */
  webhooks?: { wake(): void };
  /** Where refused verifications announce ratelimit.exceeded (absent in tools). */
  ratelimitNotices?: Pick<RatelimitNotices, "exceeded">;
  /** The environment's ROOT_KEY, in memory only (set at start-up); undefined without one. */
  environmentRootKey?: EnvironmentRootKey;
}
