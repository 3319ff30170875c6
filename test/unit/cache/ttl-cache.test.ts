import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { TtlCache } from "../../../src/cache/ttl-cache.js";

const clockAt = (t: { now: number }) => ({ now: () => t.now });

describe("TtlCache", () => {
  it("answers until the time to live has passed, then forgets", () => {
    const t = { now: 1_000 };
    const cache = new TtlCache<string>(10, 500, clockAt(t));
    cache.set("a", "A");
    t.now = 1_499;
    expect(cache.get("a")).toBe("A");
    t.now = 1_500;
    expect(cache.get("a")).toBeUndefined();
  });

  it("keeps a loaded value only when keep says so", async () => {
    const t = { now: 0 };
    const cache = new TtlCache<string | undefined>(10, 60_000, clockAt(t));
    let loads = 0;
    const loader = async () => {
      loads++;
      return undefined;
    };
    const keep = (v: string | undefined) => v !== undefined;
    expect(await cache.load("absent", loader, keep)).toBeUndefined();
    expect(await cache.load("absent", loader, keep)).toBeUndefined();
    expect(loads).toBe(2);
    expect(await cache.load("present", async () => "P", keep)).toBe("P");
    expect(await cache.load("present", async () => "other", keep)).toBe("P");
  });

  it("holds at most maxEntries, dropping the least recently used (to the second)", async () => {
    const t = { now: 0 };
    const cache = new TtlCache<number>(3, 60_000, clockAt(t));
    for (const k of ["a", "b", "c"]) cache.set(k, 1);
    t.now = 500;
    expect(cache.get("a")).toBe(1); // used within a second of storing: its place stays
    cache.set("d", 1);
    expect(["a", "b", "c", "d"].map((k) => cache.get(k))).toEqual([undefined, 1, 1, 1]);
    t.now = 2_000;
    expect(cache.get("b")).toBe(1); // a second later, a hit makes it the most recent
    expect(await cache.load("c", async () => 2)).toBe(1); // so does a hit through load
    cache.set("e", 1);
    expect(["b", "c", "d", "e"].map((k) => cache.get(k))).toEqual([1, 1, undefined, 1]);
  });

  it("evicts exactly like a least-recently-used list, over any sequence of calls", () => {
    // The model: entries in recency order, oldest first, with the cache's rules spelled out.
    type Model = { key: string; value: number; expiresAt: number; usedAt: number }[];
    const op = fc.oneof(
      fc.record({ kind: fc.constant("set" as const), key: fc.integer({ min: 0, max: 12 }) }),
      fc.record({ kind: fc.constant("get" as const), key: fc.integer({ min: 0, max: 12 }) }),
      fc.record({ kind: fc.constant("delete" as const), key: fc.integer({ min: 0, max: 12 }) }),
      fc.record({ kind: fc.constant("tick" as const), ms: fc.integer({ min: 0, max: 1_500 }) }),
      fc.constant({ kind: "clear" as const }),
    );
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 6 }), fc.array(op, { maxLength: 300 }), (max, ops) => {
        const t = { now: 0 };
        const ttl = 5_000;
        const cache = new TtlCache<number>(max, ttl, clockAt(t));
        let model: Model = [];
        const modelGet = (key: string) => {
          const i = model.findIndex((e) => e.key === key);
          const e = model[i];
          if (!e) return undefined;
          if (e.expiresAt <= t.now) {
            model.splice(i, 1);
            return undefined;
          }
          if (t.now - e.usedAt >= 1_000) {
            e.usedAt = t.now;
            model.splice(i, 1);
            model.push(e);
          }
          return e.value;
        };
        let n = 0;
        for (const o of ops) {
          if (o.kind === "tick") t.now += o.ms;
          else if (o.kind === "clear") {
            cache.clear();
            model = [];
          } else {
            const key = `k${o.key}`;
            if (o.kind === "set") {
              cache.set(key, ++n);
              model = model.filter((e) => e.key !== key);
              model.push({ key, value: n, expiresAt: t.now + ttl, usedAt: t.now });
              if (model.length > max) model.shift();
            } else if (o.kind === "delete") {
              cache.delete(key);
              model = model.filter((e) => e.key !== key);
            } else expect(cache.get(key)).toBe(modelGet(key));
          }
          expect(cache.size).toBe(model.length);
        }
        for (let k = 0; k <= 12; k++) expect(cache.get(`k${k}`)).toBe(modelGet(`k${k}`));
      }),
      { numRuns: 300 },
    );
  });

  it("evicts a full cache's oldest entry without walking the holes of earlier evictions", () => {
    // 300,000 evictions at 100,000 entries: ~22 us each when every eviction walked the Map
    // from its front (over 6 s here), well under a second with the recency list. The time
    // is printed, not asserted; the order is checked.
    const cache = new TtlCache<number>(100_000, 60_000, clockAt({ now: 0 }));
    const started = performance.now();
    for (let i = 0; i < 400_000; i++) cache.set(`k${i}`, i);
    console.log(
      `400,000 sets into a cache of 100,000: ${Math.round(performance.now() - started)} ms`,
    );
    expect(cache.size).toBe(100_000);
    expect(cache.get("k299999")).toBeUndefined();
    expect(cache.get("k300000")).toBe(300_000);
    expect(cache.get("k399999")).toBe(399_999);
  });

  it("keeps no deleted value alive, whatever came before the deletions", async () => {
    setFlagsFromString("--expose-gc");
    const gc = runInNewContext("gc") as () => void;
    // A WeakRef's target stays alive until the current job ends: collect in later tasks.
    const collect = async () => {
      for (let i = 0; i < 3; i++) {
        await new Promise((r) => setTimeout(r, 0));
        gc();
      }
    };
    const t = { now: 0 };
    const cache = new TtlCache<object>(64, 60_000, clockAt(t));
    for (let i = 0; i < 200; i++) cache.set(`k${i}`, { i }); // full: evicting
    for (let round = 0; round < 5; round++) {
      t.now += 1_000; // hits a second apart move their entries
      for (let i = 136; i < 200; i++) cache.get(`k${i}`);
    }
    // Most of it deleted (V8 rebuilds the Map's table smaller meanwhile), then the rest.
    const refs: WeakRef<object>[] = [];
    for (let i = 136; i < 200; i++) {
      refs.push(new WeakRef(cache.get(`k${i}`) as object));
      cache.delete(`k${i}`);
    }
    expect(cache.size).toBe(0);
    await collect();
    expect(refs.filter((r) => r.deref() !== undefined)).toHaveLength(0);
  });

  it("loads once for concurrent misses, and caches the value", async () => {
    const cache = new TtlCache<string>(10, 10_000, clockAt({ now: 0 }));
    let calls = 0;
    const loader = async () => {
      calls++;
      return "v";
    };
    expect(await Promise.all([cache.load("k", loader), cache.load("k", loader)])).toEqual([
      "v",
      "v",
    ]);
    expect(await cache.load("k", loader)).toBe("v");
    expect(calls).toBe(1);
  });

  it("does not store a value loaded across an invalidation", async () => {
    const cache = new TtlCache<string>(10, 10_000, clockAt({ now: 0 }));
    let release: (v: string) => void = () => {};
    const loading = cache.load("k", () => new Promise((r) => (release = r)));
    cache.delete("k");
    release("stale");
    expect(await loading).toBe("stale");
    expect(cache.get("k")).toBeUndefined();
  });

  it("stores nothing with a time to live of 0", () => {
    const cache = new TtlCache<string>(10, 0, clockAt({ now: 0 }));
    cache.set("a", "A");
    expect(cache.get("a")).toBeUndefined();
  });

  describe("replace", () => {
    const A = { v: "A" };
    const A2 = { v: "A2" };
    const B = { v: "B" };

    it("swaps the value only while the entry holds the very value expected", () => {
      const cache = new TtlCache<{ v: string }>(10, 60_000, clockAt({ now: 0 }));
      cache.set("k", A);
      expect(cache.replace("k", A, A2)).toBe(true);
      expect(cache.get("k")).toBe(A2);
      // A second swap from the same starting value finds A2 there: nothing changes.
      expect(cache.replace("k", A, B)).toBe(false);
      expect(cache.get("k")).toBe(A2);
      // An equal object is not the same value.
      expect(cache.replace("k", { v: "A2" }, B)).toBe(false);
      expect(cache.get("k")).toBe(A2);
    });

    it("never puts back an entry that was invalidated or loaded again meanwhile", async () => {
      const cache = new TtlCache<{ v: string }>(10, 60_000, clockAt({ now: 0 }));
      cache.set("k", A);
      cache.delete("k");
      expect(cache.replace("k", A, A2)).toBe(false);
      expect(cache.get("k")).toBeUndefined();
      expect(await cache.load("k", async () => B)).toBe(B);
      expect(cache.replace("k", A, A2)).toBe(false);
      expect(cache.get("k")).toBe(B);
    });

    it("keeps the entry's expiry: a derived value lives no longer than the one it replaced", () => {
      const t = { now: 0 };
      const cache = new TtlCache<{ v: string }>(10, 1_000, clockAt(t));
      cache.set("k", A);
      t.now = 900;
      expect(cache.replace("k", A, A2)).toBe(true);
      t.now = 1_000;
      expect(cache.peek("k")).toBeUndefined();
      expect(cache.replace("k", A2, B)).toBe(false);
      expect(cache.get("k")).toBeUndefined();
    });
  });

  it("peek reads without moving or removing anything", () => {
    const t = { now: 0 };
    const cache = new TtlCache<number>(2, 60_000, clockAt(t));
    cache.set("a", 1);
    cache.set("b", 2);
    t.now = 5_000;
    expect(cache.peek("a")).toBe(1); // a get would make "a" the most recent
    cache.set("c", 3);
    expect([cache.peek("a"), cache.peek("b"), cache.peek("c")]).toEqual([undefined, 2, 3]);
  });
});
