import { describe, expect, it, vi } from "vitest";
import {
  Readiness,
  type ReadinessCheck,
  ReadinessFailure,
  type ReadinessReport,
} from "../../../src/health/readiness.js";

/** A check whose next probes succeed, fail or hang as the test says, counting them. */
function scripted(name: string) {
  let next: "ok" | "fail" | "hang" = "ok";
  let failure: Error = new Error(`${name} refused`);
  const hung: (() => void)[] = [];
  const check: ReadinessCheck & { probes: number } = {
    name,
    probes: 0,
    probe() {
      check.probes++;
      if (next === "fail") return Promise.reject(failure);
      if (next === "hang") return new Promise<void>((resolve) => hung.push(resolve));
      return Promise.resolve();
    },
  };
  return {
    check,
    ok: () => {
      next = "ok";
    },
    fail: (err?: Error) => {
      next = "fail";
      if (err) failure = err;
    },
    hang: () => {
      next = "hang";
    },
    /** Lets every hung probe answer. */
    release: () => {
      for (const resolve of hung.splice(0)) resolve();
    },
  };
}

/** A clock the test moves. */
function clock() {
  let ms = 0;
  return { now: () => ms, advance: (by: number) => (ms += by) };
}

describe("Readiness", () => {
  it("is ready when every check passes, and reuses a report for cacheMs", async () => {
    const db = scripted("database");
    const time = clock();
    const readiness = new Readiness([db.check], { timeoutMs: 1_000, cacheMs: 1_000, ...time });
    expect(await readiness.report()).toEqual({ ready: true, failing: [] });
    await Promise.all([readiness.report(), readiness.report()]);
    time.advance(999);
    await readiness.report();
    expect(db.check.probes).toBe(1);
    time.advance(1);
    await readiness.report();
    expect(db.check.probes).toBe(2);
  });

  it("runs one evaluation for concurrent askers", async () => {
    const db = scripted("database");
    const readiness = new Readiness([db.check], { timeoutMs: 1_000, cacheMs: 0 });
    await Promise.all([readiness.report(), readiness.report(), readiness.report()]);
    expect(db.check.probes).toBe(1);
  });

  it("names each failing part once, in the order of the checks", async () => {
    const db = scripted("database");
    const redis = scripted("redis");
    const readiness = new Readiness([db.check, redis.check], { timeoutMs: 1_000, cacheMs: 0 });
    redis.fail();
    expect(await readiness.report()).toEqual({ ready: false, failing: ["redis"] });
    db.fail(new ReadinessFailure("migrations", "behind"));
    expect(await readiness.report()).toEqual({ ready: false, failing: ["migrations", "redis"] });
    db.ok();
    redis.ok();
    expect(await readiness.report()).toEqual({ ready: true, failing: [] });
  });

  it("takes every part a failure names (a worker's report, on the primary of WORKERS)", async () => {
    const worker = scripted("worker 1");
    const readiness = new Readiness([worker.check], { timeoutMs: 1_000, cacheMs: 0 });
    worker.fail(new ReadinessFailure(["database", "redis"], "worker 1: database, redis"));
    expect(await readiness.report()).toEqual({ ready: false, failing: ["database", "redis"] });
  });

  it("fails a check that does not answer within the timeout, without starting it again meanwhile", async () => {
    const db = scripted("database");
    const readiness = new Readiness([db.check], { timeoutMs: 20, cacheMs: 0 });
    db.hang();
    expect(await readiness.report()).toEqual({ ready: false, failing: ["database"] });
    expect(await readiness.report()).toEqual({ ready: false, failing: ["database"] });
    expect(db.check.probes).toBe(1);
    // The held probe answers at last: its answer is the next report's.
    db.release();
    expect(await readiness.report()).toEqual({ ready: true, failing: [] });
    expect(db.check.probes).toBe(1);
  });

  it("tells listeners each change once, and turns off for good at stop, at once", async () => {
    const db = scripted("database");
    const readiness = new Readiness([db.check], { timeoutMs: 1_000, cacheMs: 0 });
    const seen: ReadinessReport[] = [];
    readiness.onChange((r) => seen.push(r));
    await readiness.report();
    await readiness.report();
    db.fail();
    await readiness.report();
    await readiness.report();
    db.hang();
    const pending = readiness.report();
    readiness.stop();
    // Synchronously: a stop is heard before anything else happens.
    expect(seen.at(-1)).toEqual({ ready: false, failing: ["shutdown"] });
    db.release();
    expect(await pending).toEqual({ ready: false, failing: ["shutdown"] });
    expect(await readiness.report()).toEqual({ ready: false, failing: ["shutdown"] });
    expect(seen).toEqual([
      { ready: true, failing: [] },
      { ready: false, failing: ["database"] },
      { ready: false, failing: ["shutdown"] },
    ]);
  });

  it("keeps itself fresh while held, so listeners hear a change nobody asked for", async () => {
    const db = scripted("database");
    const readiness = new Readiness([db.check], { timeoutMs: 1_000, cacheMs: 0 });
    await readiness.report();
    const seen: ReadinessReport[] = [];
    readiness.onChange((r) => seen.push(r));
    vi.useFakeTimers();
    try {
      const letGo = readiness.keepFresh();
      db.fail();
      await vi.advanceTimersByTimeAsync(100);
      expect(seen).toEqual([{ ready: false, failing: ["database"] }]);
      letGo();
      const probes = db.check.probes;
      await vi.advanceTimersByTimeAsync(1_000);
      expect(db.check.probes).toBe(probes);
    } finally {
      vi.useRealTimers();
    }
  });
});
