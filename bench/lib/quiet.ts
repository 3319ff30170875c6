// The machine is shared (other work, other helpers' tests): before a measurement, wait a
// bounded time for it to be idle; during it, record how much CPU other processes took.
import { cpus } from "node:os";
import { ourDatabases } from "./database.ts";
import { type CpuSnapshot, cpuSnapshot, TICKS_PER_SECOND } from "./proc.ts";
import { round, sleep } from "./stats.ts";

export interface QuietSettings {
  /** Longest wait for three idle seconds in a row before a measurement (0: no wait). */
  quietWaitSeconds: number;
  /** Other processes' share above which a measurement is repeated. */
  disturbedPercent: number;
  /** How many times a disturbed measurement is repeated at most. */
  retries: number;
}

export interface Disturbance {
  waitedSeconds: number;
  busyBeforePercent: number;
  /** Other processes' share of the machine's CPU during the measurement. */
  foreignCpuPercent: number;
  attempt: number;
  discardedAttempts?: Disturbance[];
}

const capacityTicks = (a: CpuSnapshot, b: CpuSnapshot) =>
  ((b.at - a.at) / 1000) * TICKS_PER_SECOND * cpus().length;

function foreignPercent(a: CpuSnapshot, b: CpuSnapshot): number {
  const foreign = b.machine - a.machine - (b.own - a.own);
  return round(Math.max(0, (100 * foreign) / capacityTicks(a, b)), 1);
}

async function waitQuiet(maxSeconds: number) {
  const t0 = performance.now();
  let busy = Number.NaN;
  let quiet = 0;
  while (quiet < 3 && performance.now() - t0 < maxSeconds * 1000) {
    const a = cpuSnapshot(ourDatabases);
    await sleep(1000);
    const b = cpuSnapshot(ourDatabases);
    busy = (100 * (b.machine - a.machine)) / capacityTicks(a, b);
    quiet = busy < 10 ? quiet + 1 : 0;
  }
  return { waitedSeconds: round((performance.now() - t0) / 1000, 1), busy: round(busy, 1) };
}

/**
 * Runs one measurement after waiting for quiet and adds the disturbance to it. A measurement
 * during which other processes took more than `disturbedPercent` is repeated (`retries` times
 * at most; 0 for a measurement whose counts must cover every request sent) and the least
 * disturbed attempt is kept.
 */
export async function measureQuietly<T extends object>(
  settings: QuietSettings,
  fn: () => Promise<T>,
  retries = settings.retries,
): Promise<T & { machine: Disturbance }> {
  let best: (T & { machine: Disturbance }) | undefined;
  const discarded: Disturbance[] = [];
  for (let attempt = 1; attempt <= retries + 1; attempt++) {
    const quiet = await waitQuiet(settings.quietWaitSeconds);
    const a = cpuSnapshot(ourDatabases);
    const r = await fn();
    const b = cpuSnapshot(ourDatabases);
    const machine: Disturbance = {
      waitedSeconds: quiet.waitedSeconds,
      busyBeforePercent: quiet.busy,
      foreignCpuPercent: foreignPercent(a, b),
      attempt,
    };
    const result = { ...r, machine };
    if (!best || machine.foreignCpuPercent < best.machine.foreignCpuPercent) {
      if (best) discarded.push(best.machine);
      best = result;
    } else discarded.push(machine);
    if (machine.foreignCpuPercent <= settings.disturbedPercent) break;
    console.log(`  (other processes took ${machine.foreignCpuPercent}% during attempt ${attempt})`);
  }
  if (!best) throw new Error("no attempt ran");
  if (discarded.length > 0) best.machine.discardedAttempts = discarded;
  return best;
}
