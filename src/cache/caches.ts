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
   * Verification records of live keys by the scope of the lookup and the plain SHA-256 of
   * their secret (`keyCacheKey`; null: no such key there), whatever form the key is stored
   * in: a hit costs one hash and one lookup, pepper or not. One secret may be a key of
   * several workspaces, so an entry never answers for another scope.
   */
  keys: TtlCache<KeyRecordRow | null>;
  /**
   * For cached keys stored in another form (under a pepper), their stored hash to the plain
   * SHA-256 their `keys` entries are under: invalidations name the stored hash.
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

/** The `keys` entry of a lookup of the plain hash `plain` in one workspace. */
export function keyInWorkspace(workspaceId: string, plain: string): string {
  return `w:${workspaceId}:${plain}`;
}

/**
 * The `keys` entry of a lookup of `plain` in one API. The tag keeps an API id from ever
 * reading a workspace's entry; the hash has a fixed length, so two scopes never meet.
 */
export function keyInApi(apiId: string, plain: string): string {
  return `a:${apiId}:${plain}`;
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
        // The lookups that can meet this key: in its workspace and in its API. Also drops a
        // cached "no such key" there for a hash that now exists.
        for (const plain of [e.hash, caches.keyAliases.get(e.hash)]) {
          if (plain === undefined) continue;
          caches.keys.delete(keyInWorkspace(e.workspaceId, plain));
          caches.keys.delete(keyInApi(e.apiId, plain));
        }
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
