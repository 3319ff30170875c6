import type { Clock } from "../domain/clock.js";
import type { ApiRow } from "../storage/queries/apis.js";
import type { KeyRecordRow } from "../storage/queries/key-records.js";
import type { NamespaceRow, OverrideRow } from "../storage/queries/ratelimit-namespaces.js";
import type { RootKeyRow } from "../storage/queries/root-keys.js";
import type { InvalidationBus } from "./bus.js";
import { TtlCache } from "./ttl-cache.js";

/** Sizing of the in-process caches. */
export interface CacheOptions {
  maxEntries: number;
  /** Time to live; at most 30 s, so a change whose notification was lost still shows within 30 s. */
  ttlMs: number;
}

/** The caches of one node. `null` entries remember that something does not exist. */
export interface Caches {
  /** Root keys by the hash of their secret. */
  rootKeys: TtlCache<RootKeyRow | null>;
  /** Live APIs by `workspaceId:apiId`. */
  apis: TtlCache<ApiRow | null>;
  /**
   * Verification records of live keys by the plain SHA-256 of their secret (null: no such
   * key), whatever form the key is stored in: a hit costs one hash, pepper or not.
   */
  keys: TtlCache<KeyRecordRow | null>;
  /**
   * For cached keys stored in another form (under a pepper), their stored hash to their
   * `keys` entry: invalidations name the stored hash.
   */
  keyAliases: TtlCache<string>;
  /** Rate-limit namespaces with their overrides, by `workspaceId:<id or name as asked>`. */
  namespaces: TtlCache<NamespaceEntry | undefined>;
}

/** A namespace and its live overrides, as the rate limiter reads them. */
export interface NamespaceEntry {
  namespace: NamespaceRow;
  overrides: OverrideRow[];
}

/** The cache key of an API. */
export function apiCacheKey(workspaceId: string, apiId: string): string {
  return `${workspaceId}:${apiId}`;
}

/** Creates the caches and subscribes them to the invalidation bus. */
export function createCaches(options: CacheOptions, clock: Clock, bus: InvalidationBus): Caches {
  const caches: Caches = {
    rootKeys: new TtlCache(options.maxEntries, options.ttlMs, clock),
    apis: new TtlCache(options.maxEntries, options.ttlMs, clock),
    keys: new TtlCache(options.maxEntries, options.ttlMs, clock),
    // An alias outlives the entry it names (set just before it), so invalidations find it.
    keyAliases: new TtlCache(
      options.maxEntries,
      options.ttlMs > 0 ? options.ttlMs + 1_000 : 0,
      clock,
    ),
    namespaces: new TtlCache(options.maxEntries, options.ttlMs, clock),
  };
  bus.subscribe((e) => {
    switch (e.kind) {
      case "all":
        caches.rootKeys.clear();
        caches.apis.clear();
        caches.keys.clear();
        caches.keyAliases.clear();
        caches.namespaces.clear();
        break;
      case "rootKeys":
        caches.rootKeys.clear();
        break;
      case "api":
        caches.apis.delete(apiCacheKey(e.workspaceId, e.id));
        caches.keys.deleteWhere((r) => r?.apiId === e.id);
        break;
      case "key": {
        // Also drops a cached "no such key" for a hash that now exists.
        caches.keys.delete(e.hash);
        const alias = caches.keyAliases.get(e.hash);
        if (alias !== undefined) caches.keys.delete(alias);
        break;
      }
      case "identity":
        caches.keys.deleteWhere((r) => r?.identityId === e.id);
        break;
      case "rbac":
        caches.keys.deleteWhere((r) => r?.workspaceId === e.workspaceId);
        break;
      case "namespace":
        caches.namespaces.deleteWhere((n) => n?.namespace.id === e.id);
        break;
    }
  });
  return caches;
}
