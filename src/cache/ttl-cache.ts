import type { Clock } from "../domain/clock.js";

interface Entry<V> {
  key: string;
  value: V;
  expiresAt: number;
  /** When the entry was last moved to the most recent end. */
  usedAt: number;
  /** Its neighbours in recency order. */
  older: Entry<V> | undefined;
  newer: Entry<V> | undefined;
}

const always = () => true;

/** How stale an entry's place in the recency order may be. */
const RECENCY_RESOLUTION_MS = 1_000;

/**
 * A bounded in-process cache with least-recently-used eviction (to the second) and a time to
 * live. `load` coalesces concurrent misses of one key into one loader call, and does not store
 * a value if an invalidation happened while it was loading, so an invalidation can never be
 * overwritten by a read that started before it.
 *
 * The recency order is a list through the entries, not the Map's own order. Kept in the Map
 * (a hit deleted and set its entry again; eviction took `keys().next()`), a hit made V8
 * rebuild the Map's table, in the old generation as the Map lives long, and every eviction
 * walked the holes that earlier deletions left at the Map's front: ~22 us per eviction at
 * 100,000 entries, on every miss of a full cache. A move in the list writes a few fields; a
 * hit still moves its entry at most once a second.
 */
export class TtlCache<V> {
  private readonly entries = new Map<string, Entry<V>>();
  private readonly inflight = new Map<string, Promise<V>>();
  private generation = 0;
  /** The two ends of the recency list. */
  private oldest: Entry<V> | undefined;
  private newest: Entry<V> | undefined;

  constructor(
    private readonly maxEntries: number,
    private readonly ttlMs: number,
    private readonly clock: Clock,
  ) {}

  /** The cached value, or undefined when absent or expired. */
  get(key: string): V | undefined {
    const e = this.entries.get(key);
    if (!e) return undefined;
    const now = this.clock.now();
    if (e.expiresAt <= now) {
      this.remove(e);
      return undefined;
    }
    this.used(e, now);
    return e.value;
  }

  /** The cached value, or undefined when absent or expired; moves nothing, removes nothing. */
  peek(key: string): V | undefined {
    const e = this.entries.get(key);
    return e !== undefined && e.expiresAt > this.clock.now() ? e.value : undefined;
  }

  /**
   * Puts `next` in place of `expected` when the entry still holds that very value (and has
   * not expired); returns whether it did. Nothing else changes: the entry keeps its expiry
   * (a value derived from a cached one is no fresher than it) and its place in the recency
   * order. A value that was invalidated, expired or replaced meanwhile is left alone, so a
   * read that started before an invalidation never puts its value back.
   */
  replace(key: string, expected: V, next: V): boolean {
    const e = this.entries.get(key);
    if (e === undefined || e.value !== expected || e.expiresAt <= this.clock.now()) return false;
    e.value = next;
    return true;
  }

  /** Moves a hit entry to the most recent end, unless it got there less than 1 s ago. */
  private used(e: Entry<V>, now: number): void {
    if (now - e.usedAt < RECENCY_RESOLUTION_MS) return;
    e.usedAt = now;
    this.unlink(e);
    this.append(e);
  }

  set(key: string, value: V): void {
    // A time to live of 0 disables the cache.
    if (this.ttlMs <= 0) return;
    const now = this.clock.now();
    const e = this.entries.get(key);
    if (e) {
      e.value = value;
      e.expiresAt = now + this.ttlMs;
      e.usedAt = now;
      this.unlink(e);
      this.append(e);
      return;
    }
    const entry: Entry<V> = {
      key,
      value,
      expiresAt: now + this.ttlMs,
      usedAt: now,
      older: undefined,
      newer: undefined,
    };
    this.entries.set(key, entry);
    this.append(entry);
    if (this.entries.size > this.maxEntries && this.oldest) this.remove(this.oldest);
  }

  /** Takes an entry out of the Map and the list. */
  private remove(e: Entry<V>): void {
    this.entries.delete(e.key);
    this.unlink(e);
  }

  private unlink(e: Entry<V>): void {
    if (e.older) e.older.newer = e.newer;
    else this.oldest = e.newer;
    if (e.newer) e.newer.older = e.older;
    else this.newest = e.older;
    e.older = undefined;
    e.newer = undefined;
  }

  private append(e: Entry<V>): void {
    e.older = this.newest;
    if (this.newest) this.newest.newer = e;
    else this.oldest = e;
    this.newest = e;
  }

  /**
   * Returns the cached value or loads it once for all concurrent callers; a loaded value is
   * kept only if `keep` says so (e.g. not an absence that a creation would not invalidate).
   */
  load(key: string, loader: () => Promise<V>, keep: (value: V) => boolean = always): Promise<V> {
    const e = this.entries.get(key);
    if (e !== undefined) {
      const now = this.clock.now();
      if (e.expiresAt > now) {
        this.used(e, now);
        return Promise.resolve(e.value);
      }
    }
    const pending = this.inflight.get(key);
    if (pending) return pending;
    const generation = this.generation;
    const p = loader().then(
      (value) => {
        if (this.inflight.get(key) === p) this.inflight.delete(key);
        if (this.generation === generation && keep(value)) this.set(key, value);
        return value;
      },
      (err: unknown) => {
        if (this.inflight.get(key) === p) this.inflight.delete(key);
        throw err;
      },
    );
    this.inflight.set(key, p);
    return p;
  }

  delete(key: string): void {
    this.generation++;
    const e = this.entries.get(key);
    if (e) this.remove(e);
    this.inflight.delete(key);
  }

  /** Removes every entry whose value matches (a scan: for rare, broad invalidations). */
  deleteWhere(predicate: (value: V) => boolean): void {
    this.generation++;
    for (const e of this.entries.values()) if (predicate(e.value)) this.remove(e);
    this.inflight.clear();
  }

  clear(): void {
    this.generation++;
    this.entries.clear();
    this.oldest = undefined;
    this.newest = undefined;
    this.inflight.clear();
  }

  get size(): number {
    return this.entries.size;
  }
}
