// What Linux says about a process: its CPU time and how often its core was taken away.
import { readdirSync, readFileSync } from "node:fs";

/** USER_HZ: the unit of the CPU times in /proc (100 on Linux). */
export const TICKS_PER_SECOND = 100;

/** Parent and CPU ticks (own, and of waited-for children) of `pid`; null once it is gone. */
export function readStat(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    // f[0] is field 3 (state): ppid is field 4, utime 14, stime 15, cutime 16, cstime 17.
    return {
      ppid: Number(f[1]),
      ticks: Number(f[11]) + Number(f[12]),
      childTicks: Number(f[13]) + Number(f[14]),
    };
  } catch {
    return null;
  }
}

/** CPU time (user + system, all threads, ms) and involuntary context switches of a process. */
export function processUsage(pid) {
  let preempted = 0;
  for (const task of readdirSync(`/proc/${pid}/task`)) {
    try {
      const status = readFileSync(`/proc/${pid}/task/${task}/status`, "utf8");
      preempted += Number(/nonvoluntary_ctxt_switches:\s+(\d+)/.exec(status)?.[1] ?? 0);
    } catch {
      // the thread ended meanwhile
    }
  }
  const ticks = readStat(pid)?.ticks ?? Number.NaN;
  return { cpuMs: (ticks * 1000) / TICKS_PER_SECOND, preempted };
}
