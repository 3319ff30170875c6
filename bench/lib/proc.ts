// What Linux says about processes: CPU time (all threads), preemptions, memory, and the CPU
// of the PostgreSQL backends that serve a given database.
import { readdirSync, readFileSync } from "node:fs";

/** USER_HZ: the unit of the CPU times in /proc (100 on Linux). */
export const TICKS_PER_SECOND = 100;

export interface Stat {
  ppid: number;
  /** utime + stime of every thread of the process. */
  ticks: number;
  /** The same of its children that it waited for. */
  childTicks: number;
}

/** /proc/<pid>/stat; null once the process is gone. */
export function readStat(pid: number): Stat | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // Fields after the command (which may hold spaces): f[0] is field 3 (state), ppid is
    // field 4, utime 14, stime 15, cutime 16, cstime 17.
    const f = stat
      .slice(stat.lastIndexOf(")") + 2)
      .split(" ")
      .map(Number);
    return {
      ppid: f[1] ?? 0,
      ticks: (f[11] ?? 0) + (f[12] ?? 0),
      childTicks: (f[13] ?? 0) + (f[14] ?? 0),
    };
  } catch {
    return null;
  }
}

export interface Usage {
  /** User + system CPU of every thread, ms. */
  cpuMs: number;
  /** Involuntary context switches of every thread: how often the kernel took a core away. */
  preempted: number;
}

export function processUsage(pid: number): Usage {
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

/** Resident memory now and at its peak (VmHWM), MB. */
export function memoryOf(pid: number): { rssMb: number; peakMb: number } {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = (name: string) => Number(new RegExp(`${name}:\\s+(\\d+)`).exec(status)?.[1]);
  return { rssMb: round1(kb("VmRSS") / 1024), peakMb: round1(kb("VmHWM") / 1024) };
}

const round1 = (x: number) => Math.round(x * 10) / 10;

function pids(): number[] {
  return readdirSync("/proc")
    .filter((d) => /^\d+$/.test(d))
    .map(Number);
}

function commandOf(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8");
  } catch {
    return "";
  }
}

/**
 * CPU ms of the PostgreSQL backends connected to any of `databases` (found by their process
 * title). A backend that ended meanwhile takes its time with it,
 * so a load keeps its connections open while it is measured.
 */
export function postgresBackendsCpuMs(databases: Iterable<string>): number {
  const names = [...databases];
  if (names.length === 0) return 0;
  let ticks = 0;
  for (const pid of pids()) {
    const cmd = commandOf(pid);
    if (!cmd.startsWith("postgres:")) continue;
    // `postgres: [cluster: ]<user> <database> <client> <state>`
    const words = cmd.split(/[\s\0]+/);
    if (names.some((db) => words.includes(db))) ticks += readStat(pid)?.ticks ?? 0;
  }
  return (ticks * 1000) / TICKS_PER_SECOND;
}

export interface CpuSnapshot {
  at: number;
  /** Busy ticks of the whole machine. */
  machine: number;
  /** Busy ticks of this process tree and of the backends of `databases`. */
  own: number;
}

/** The stat of every process now, and the set of `root` and its descendants among them. */
function tree(root: number): { stats: Map<number, Stat>; members: Set<number> } {
  const stats = new Map<number, Stat>();
  for (const pid of pids()) {
    const s = readStat(pid);
    if (s) stats.set(pid, s);
  }
  const members = new Set([root]);
  for (let grew = true; grew; ) {
    grew = false;
    for (const [pid, s] of stats) {
      if (!members.has(pid) && members.has(s.ppid)) {
        members.add(pid);
        grew = true;
      }
    }
  }
  return { stats, members };
}

/**
 * CPU ms of `root` and of every process under it (every thread): a server of WORKERS is a
 * primary and its workers.
 */
export function processTreeCpuMs(root: number): number {
  const { stats, members } = tree(root);
  let ticks = 0;
  for (const pid of members) ticks += stats.get(pid)?.ticks ?? 0;
  return (ticks * 1000) / TICKS_PER_SECOND;
}

/** The machine's busy ticks and ours (this process, its descendants, our backends). */
export function cpuSnapshot(databases: Iterable<string>): CpuSnapshot {
  const line = readFileSync("/proc/stat", "utf8").split("\n")[0]?.trim().split(/\s+/) ?? [];
  const [user, nice, system, , , irq, softirq, steal] = line.slice(1).map(Number);
  const machine =
    (user ?? 0) + (nice ?? 0) + (system ?? 0) + (irq ?? 0) + (softirq ?? 0) + (steal ?? 0);
  const { stats, members: ours } = tree(process.pid);
  let own = stats.get(process.pid)?.childTicks ?? 0;
  for (const pid of ours) own += stats.get(pid)?.ticks ?? 0;
  own += (postgresBackendsCpuMs(databases) * TICKS_PER_SECOND) / 1000;
  return { at: performance.now(), machine, own };
}
