import type { InvalidationBus } from "../cache/bus.js";
import type { Caches } from "../cache/caches.js";
import type { Config } from "../config.js";
import type { Clock } from "../domain/clock.js";
import type { Logger } from "../log.js";
import type { Db } from "../storage/db.js";

/** What every procedure may use: one instance per server. */
export interface Deps {
  db: Db;
  clock: Clock;
  bus: InvalidationBus;
  caches: Caches;
  log: Logger;
  config: Config;
}
