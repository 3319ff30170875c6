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
});
