// Latchkey (the built server) and the bare servers as child processes.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ROOT_KEY } from "./api.ts";
import { projectRoot } from "./dist.ts";
import { startProcess } from "./process.ts";

export type Engine = "pglite" | "postgresql";

/**
 * BENCH_SERVER_NODE_ARGS: flags for Latchkey's Node, space-separated (to compare V8 flags, or
 * --perf-basic-prof so that `perf record` can name the JavaScript frames).
 */
export function serverNodeArgs(): string[] {
  return (process.env.BENCH_SERVER_NODE_ARGS ?? "").split(" ").filter(Boolean);
}

export interface LatchkeyOptions {
  /** PostgreSQL; without it, PGlite in a fresh data directory (removed at stop). */
  databaseUrl?: string;
  /** More settings of the server (the environment of `latchkey serve`). */
  env?: Record<string, string>;
  /** Open the gRPC port too (GRPC_PORT=0) instead of GRPC_PORT=off. */
  grpc?: boolean;
  /** Pin the server to this core (taskset). */
  cpu?: number;
  /** Start with an inspector (to profile or force a GC through it). */
  inspect?: boolean;
  nodeArgs?: string[];
  /** A built checkout to run instead of this one (verify-ab). */
  checkout?: string;
}

export interface Latchkey {
  base: string;
  /**
   * Where its /metrics are: the admin port; the main port for a checkout built before the
   * admin port existed (verify-ab).
   */
  admin: string;
  port: number;
  grpcPort: number | undefined;
  /** host:port/id of the inspector's WebSocket (with `inspect`). */
  inspector: string | undefined;
  pid: number;
  engine: Engine;
  stop(): Promise<void>;
}

const LISTENING =
  /"port":(\d+)(?:,"grpcPort":(\d+))?(?:,"adminPort":(\d+))?[^\n]*latchkey listening/;

/** Starts `latchkey serve` on this process's Node (Node 24) on a free port. */
export async function startLatchkey(options: LatchkeyOptions = {}): Promise<Latchkey> {
  const dataDir = options.databaseUrl
    ? undefined
    : mkdtempSync(join(tmpdir(), "latchkey-bench-data-"));
  const storage: Record<string, string> = options.databaseUrl
    ? { DATABASE_URL: options.databaseUrl }
    : { DATA_DIR: dataDir ?? "" };
  const main = join(options.checkout ?? projectRoot, "dist/src/cli/main.js");
  try {
    const started = await startProcess(
      [
        process.execPath,
        ...(options.nodeArgs ?? []),
        ...(options.inspect ? ["--inspect=127.0.0.1:0"] : []),
        main,
        "serve",
      ],
      {
        env: {
          PORT: "0",
          GRPC_PORT: options.grpc ? "0" : "off",
          ADMIN_PORT: "0",
          HOST: "127.0.0.1",
          ROOT_KEY,
          LOG_LEVEL: "info",
          ...storage,
          ...options.env,
        },
        ready: LISTENING,
        cpu: options.cpu,
        // PGlite's first start runs initdb: on a busy machine that alone can take a minute.
        timeoutMs: 180_000,
      },
    );
    const port = Number(started.match[1]);
    const base = `http://127.0.0.1:${port}`;
    return {
      base,
      admin: started.match[3] ? `http://127.0.0.1:${started.match[3]}` : base,
      port,
      grpcPort: started.match[2] ? Number(started.match[2]) : undefined,
      inspector: /ws:\/\/(127\.0\.0\.1:\d+\/[\w-]+)/.exec(started.output)?.[1],
      pid: started.pid,
      engine: options.databaseUrl ? "postgresql" : "pglite",
      stop: async () => {
        await started.stop();
        if (dataDir) rmSync(dataDir, { recursive: true, force: true });
      },
    };
  } catch (err) {
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
    throw err;
  }
}

/** Starts Latchkey, runs `fn` with it and stops it (even on failure). */
export async function withLatchkey<T>(
  options: LatchkeyOptions,
  fn: (lk: Latchkey) => Promise<T>,
): Promise<T> {
  const lk = await startLatchkey(options);
  try {
    return await fn(lk);
  } finally {
    await lk.stop();
  }
}

/** What a bare server answers: an envelope of the same shape and size as Latchkey's. */
export type BareShape = "get-api" | "verify";

export interface BareServer {
  /** http://127.0.0.1:<port>/ */
  url: string;
  port: number;
  pid: number;
  /** Its event-loop delay since the last read (bench/lib/eventloop.ts), on a side port. */
  eventLoopUrl: string;
  stop(): Promise<void>;
}

/**
 * A bare node:http (`http`) or @grpc/grpc-js (`grpc`) server answering `shape` with no
 * framework, checks or storage: the ceiling a door is compared with.
 */
export async function startBare(
  protocol: "http" | "grpc",
  shape: BareShape,
  cpu?: number,
): Promise<BareServer> {
  const script = join(projectRoot, `bench/servers/bare-${protocol}.ts`);
  const started = await startProcess([process.execPath, script], {
    env: { BARE_SHAPE: shape },
    ready: /\{"port":(\d+),"eventLoopPort":(\d+)\}/,
    cpu,
  });
  const port = Number(started.match[1]);
  return {
    url: `http://127.0.0.1:${port}/`,
    port,
    pid: started.pid,
    eventLoopUrl: `http://127.0.0.1:${started.match[2]}/`,
    stop: started.stop,
  };
}

/** Starts a bare server, runs `fn` with it and stops it. */
export async function withBare<T>(
  protocol: "http" | "grpc",
  shape: BareShape,
  fn: (bare: BareServer) => Promise<T>,
  cpu?: number,
): Promise<T> {
  const bare = await startBare(protocol, shape, cpu);
  try {
    return await fn(bare);
  } finally {
    await bare.stop();
  }
}
