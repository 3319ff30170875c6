import type { Clock } from "../domain/clock.js";

interface Entry<V> {
  value: V;
  expiresAt: number;
  /** When the entry was last moved to the most recent end. */
  usedAt: number;
}

const always = () => true;

/** How stale an entry's place in the recency order may be. */
const RECENCY_RESOLUTION_MS = 1_000;

/**
 * A bounded in-process cache with least-recently-used eviction (to the second) and a time to
 * live. A hit moves its entry to the most recent end of the Map at most once a second: moving
 * it on every hit made V8 rebuild the Map's table again and again, straight in the old
 * generation as the Map lives long, and old-generation garbage is what brings the full
 * collections (10-60 ms pauses on one core). `load` coalesces concurrent misses of one key
 * into one loader call, and does not store a value if an invalidation happened while it was
 * loading, so an invalidation can never be overwritten by a read that started before it.
 */
export class TtlCache<V> {
  private readonly entries = new Map<string, Entry<V>>();
  private readonly inflight = new Map<string, Promise<V>>();
  private generation = 0;
  /** Walks the entries oldest first, across evictions (see `oldest`). */
  private evictor: MapIterator<string> | undefined;

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
      this.entries.delete(key);
      return undefined;
    }
    this.used(key, e, now);
    return e.value;
  }

  /** Moves a hit entry to the most recent end, unless it got there less than 1 s ago. */
  private used(key: string, e: Entry<V>, now: number): void {
    if (now - e.usedAt < RECENCY_RESOLUTION_MS) return;
    e.usedAt = now;
    this.entries.delete(key);
    this.entries.set(key, e);
  }

  set(key: string, value: V): void {
    // A time to live of 0 disables the cache.
    if (this.ttlMs <= 0) return;
    this.entries.delete(key);
    const now = this.clock.now();
    this.entries.set(key, { value, expiresAt: now + this.ttlMs, usedAt: now });
    if (this.entries.size > this.maxEntries) {
      this.entries.delete(this.oldest() as string);
    } else {
      // Kept only while evicting: an iterator left on a table V8 has since rebuilt holds the
      // entries of that table, deleted ones included, until its next step.
      this.evictor = undefined;
    }
  }

  /**
   * The least recently used key. A Map leaves a deleted entry as a hole until it rebuilds its
   * table, and a new `keys()` walks every hole at the front: with the cache full, where every
   * set evicts one entry, that cost ~22 us per eviction at 100,000 entries (a cache miss of
   * a key service with more keys than the bound). One iterator kept across evictions passes
   * each hole once. Every entry behind it has been evicted (a set or a hit moves its entry
   * to the end, ahead of it), so the next key it yields is the oldest.
   */
  private oldest(): string | undefined {
    for (let attempt = 0; attempt < 2; attempt++) {
      this.evictor ??= this.entries.keys();
      const next = this.evictor.next();
      if (!next.done) return next.value;
      this.evictor = undefined; // at its end an iterator stays done, even as entries are added
    }
    return undefined;
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
        this.used(key, e, now);
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
    this.entries.delete(key);
    this.inflight.delete(key);
  }

  /** Removes every entry whose value matches (a scan: for rare, broad invalidations). */
  deleteWhere(predicate: (value: V) => boolean): void {
    this.generation++;
    for (const [key, e] of this.entries) if (predicate(e.value)) this.entries.delete(key);
    this.inflight.clear();
    this.evictor = undefined; // many deletions may have made V8 rebuild the table (see set)
  }

  clear(): void {
    this.generation++;
    this.entries.clear();
    this.evictor = undefined;
    this.inflight.clear();
  }

  get size(): number {
    return this.entries.size;
  }
}
