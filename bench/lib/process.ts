// Child processes of the scenarios: started, awaited until ready, stopped.
import { type ChildProcess, spawn } from "node:child_process";

export interface Started {
  child: ChildProcess;
  pid: number;
  /** The match of the readiness pattern in the child's output. */
  match: RegExpExecArray;
  /** Its output (stdout and stderr) until it was ready. */
  output: string;
  stop(): Promise<void>;
}

/** `argv` prefixed with taskset when `cpu` is given: [bin, args]. */
export function pinned(cpu: number | undefined, argv: string[]): [string, string[]] {
  if (cpu === undefined) return [argv[0] ?? process.execPath, argv.slice(1)];
  return ["taskset", ["-c", String(cpu), ...argv]];
}

/**
 * Spawns `argv` and resolves once its output (stdout and stderr) matches `ready`; rejects if
 * it exits first or is not ready within `timeoutMs`.
 */
export function startProcess(
  argv: string[],
  options: { env?: Record<string, string>; ready: RegExp; cpu?: number; timeoutMs?: number },
): Promise<Started> {
  const [bin, args] = pinned(options.cpu, argv);
  const child = spawn(bin, args, {
    env: { ...process.env, ...options.env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const timeoutMs = options.timeoutMs ?? 60_000;
  let out = "";
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`not ready in ${timeoutMs} ms: ${argv.join(" ")}\n${out}`));
    }, timeoutMs);
    const onData = (chunk: Buffer) => {
      out += chunk;
      const match = options.ready.exec(out);
      if (!match) return;
      clearTimeout(timer);
      child.stdout?.off("data", onData);
      child.stderr?.off("data", onData);
      // Keep draining, or a chatty child blocks on a full pipe.
      child.stdout?.resume();
      child.stderr?.resume();
      child.removeListener("exit", onExit);
      resolve({ child, pid: child.pid ?? 0, match, output: out, stop: () => stopChild(child) });
    };
    const onExit = (code: number | null) => {
      clearTimeout(timer);
      reject(new Error(`exited with ${code}: ${argv.join(" ")}\n${out}`));
    };
    child.stdout?.on("data", onData);
    child.stderr?.on("data", onData);
    child.once("exit", onExit);
  });
}

/** SIGTERM, then SIGKILL after 10 s: a server still flushing its events gets that long. */
function stopChild(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
    child.once("exit", () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill("SIGTERM");
  });
}

/** Runs `argv` to its end; resolves with its stdout, rejects on a non-zero exit. */
export function runToEnd(
  argv: string[],
  options: { cpu?: number; timeoutMs?: number; env?: Record<string, string> } = {},
): Promise<string> {
  const [bin, args] = pinned(options.cpu, argv);
  return new Promise((resolve, reject) => {
    const child = spawn(bin, args, {
      env: { ...process.env, ...options.env },
      stdio: ["ignore", "pipe", "inherit"],
    });
    let out = "";
    child.stdout.on("data", (c: Buffer) => {
      out += c;
    });
    const timer = setTimeout(() => child.kill("SIGKILL"), options.timeoutMs ?? 30 * 60_000);
    child.once("exit", (code) => {
      clearTimeout(timer);
      if (code === 0) resolve(out);
      else reject(new Error(`${argv.join(" ")} exited with ${code}: ${out}`));
    });
  });
}
