// Where a process's resident memory is, from /proc/<pid>/smaps: by kind of mapping.
import { readFileSync } from "node:fs";

/** Resident MB of a process by kind of mapping; the kinds add up to VmRSS (within rounding). */
export interface MemoryParts {
  /**
   * WebAssembly linear memories: the pages touched of each (PGlite's PostgreSQL, the analytics
   * parser), largest first. V8 reserves one as a read-write mapping followed by gigabytes of
   * inaccessible guard pages; nothing else in a Node process is laid out so.
   */
  wasmMemoriesMb: number[];
  /** Anonymous executable mappings: code V8 compiled (WebAssembly and JavaScript). */
  compiledCodeMb: number;
  /** File-backed mappings: the node binary and shared libraries. */
  filesMb: number;
  /**
   * The other anonymous memory: V8's heaps (every thread), malloc arenas (V8's compiler zones
   * and Node's buffers among them), thread stacks.
   */
  otherAnonymousMb: number;
}

interface Mapping {
  start: number;
  end: number;
  perms: string;
  path: string;
  rssKb: number;
}

const HEADER = /^([0-9a-f]+)-([0-9a-f]+) (\S{4}) \S+ \S+ \S+\s*(.*)$/;
/** Guard pages after a WebAssembly memory: V8 reserves 8 GiB or more for a 32-bit memory. */
const WASM_GUARD_BYTES = 4 * 2 ** 30;

function mappings(smaps: string): Mapping[] {
  const out: Mapping[] = [];
  for (const line of smaps.split("\n")) {
    const h = HEADER.exec(line);
    if (h) {
      out.push({
        start: Number.parseInt(h[1] ?? "0", 16),
        end: Number.parseInt(h[2] ?? "0", 16),
        perms: h[3] ?? "",
        path: h[4] ?? "",
        rssKb: 0,
      });
      continue;
    }
    const rss = /^Rss:\s+(\d+) kB/.exec(line);
    const last = out.at(-1);
    if (rss && last) last.rssKb = Number(rss[1]);
  }
  return out;
}

const mb = (kb: number) => Math.round(kb / 102.4) / 10;

/** The resident memory of `pid` by kind of mapping (Linux). */
export function memoryParts(pid: number): MemoryParts {
  return partsOf(readFileSync(`/proc/${pid}/smaps`, "utf8"));
}

/** The resident memory described by the text of a /proc/<pid>/smaps, by kind of mapping. */
export function partsOf(smaps: string): MemoryParts {
  const maps = mappings(smaps);
  const wasm: number[] = [];
  let code = 0;
  let files = 0;
  let other = 0;
  maps.forEach((m, i) => {
    const next = maps[i + 1];
    const anonymous = m.path === "" || m.path.startsWith("[anon");
    if (
      anonymous &&
      m.perms.startsWith("rw") &&
      next?.start === m.end &&
      next.perms.startsWith("---") &&
      next.end - next.start >= WASM_GUARD_BYTES
    )
      wasm.push(m.rssKb);
    else if (m.path.startsWith("/")) files += m.rssKb;
    else if (anonymous && m.perms.includes("x")) code += m.rssKb;
    else other += m.rssKb;
  });
  return {
    wasmMemoriesMb: wasm.sort((a, b) => b - a).map(mb),
    compiledCodeMb: mb(code),
    filesMb: mb(files),
    otherAnonymousMb: mb(other),
  };
}
