/** One entry of an `Inflight` list. */
export interface InflightEntry<T> {
  readonly item: T;
  /** When it was added, on the caller's clock (0 when the caller keeps none). */
  readonly startMs: number;
  prev: InflightEntry<T> | undefined;
  next: InflightEntry<T> | undefined;
  linked: boolean;
}

/**
 * The requests in flight, as a doubly linked list. A Set did the same job, but a long-lived
 * Set resizes its table as it fills and empties, and V8 allocates a resized table of an
 * old-generation Set straight in the old generation: at 5,000 req/s that was the largest
 * source of old-generation garbage (14% of the bytes that outlived a young collection), and
 * old-generation garbage is what brings the full collections, 10-60 ms pauses on one core.
 * An entry here is an ordinary short-lived object.
 */
export class Inflight<T> implements Iterable<T> {
  private head: InflightEntry<T> | undefined;
  private count = 0;

  get size(): number {
    return this.count;
  }

  add(item: T, startMs = 0): InflightEntry<T> {
    const entry: InflightEntry<T> = {
      item,
      startMs,
      prev: undefined,
      next: this.head,
      linked: true,
    };
    if (this.head) this.head.prev = entry;
    this.head = entry;
    this.count++;
    return entry;
  }

  /** Unlinks the entry; false when it was already removed. */
  remove(entry: InflightEntry<T>): boolean {
    if (!entry.linked) return false;
    entry.linked = false;
    if (entry.prev) entry.prev.next = entry.next;
    else this.head = entry.next;
    if (entry.next) entry.next.prev = entry.prev;
    entry.prev = undefined;
    entry.next = undefined;
    this.count--;
    return true;
  }

  *[Symbol.iterator](): Iterator<T> {
    for (let e = this.head; e; e = e.next) yield e.item;
  }

  /** The entries, newest first; an entry may be removed while iterating. */
  *entries(): Generator<InflightEntry<T>> {
    for (let e = this.head; e; ) {
      const next = e.next;
      yield e;
      e = next;
    }
  }
}
