import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { randomString } from "../../src/domain/random.js";
import { type NodeProcess, startNode } from "../harness/processes.js";

// biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON bodies
type Json = any;

/** The rig's own services, apart from the shared ones of the other suites. */
const PG_VERSION = "15";
const PG_CLUSTER = "latchkey_rig";
const PG_PORT = 5433;
const REDIS_PORT = 6380;
const ROOT_KEY = "rig_root_key_0123456789abcdef";

/** Whether this machine can run the rig (Debian's cluster tools and redis-server, as root). */
export function rigAvailable(): boolean {
  return (
    process.getuid?.() === 0 &&
    existsSync("/usr/bin/pg_createcluster") &&
    existsSync("/usr/bin/redis-server") &&
    existsSync(`/usr/lib/postgresql/${PG_VERSION}/bin/postgres`)
  );
}

function run(cmd: string, args: string[]): string {
  return execFileSync(cmd, args, { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
}

function quiet(cmd: string, args: string[]): void {
  try {
    run(cmd, args);
  } catch {}
}

function psql(sql: string): void {
  run("psql", ["-h", "127.0.0.1", "-p", String(PG_PORT), "-U", "postgres", "-c", sql]);
}

/**
 * Creates the rig's PostgreSQL cluster and Redis, once per run of the cluster project (its
 * global setup, test/cluster/global-setup.ts): creating a cluster (initdb) is most of what a
 * rig used to cost. Whatever a killed run left is removed first, so it cannot break this run.
 */
export function createServices(): void {
  removeServices();
  run("pg_createcluster", [
    PG_VERSION,
    PG_CLUSTER,
    "--port",
    String(PG_PORT),
    "--start",
    // The OS never crashes in these tests; fsync off keeps the rig fast.
    "-o",
    "fsync=off",
    "-o",
    "max_connections=200",
    "--",
    "--auth-local=trust",
    "--auth-host=trust",
  ]);
  startRedis();
}

/** Removes the rig's PostgreSQL cluster and stops its Redis (the end of the run). */
export function removeServices(): void {
  stopRedis();
  quiet("pg_dropcluster", ["--stop", PG_VERSION, PG_CLUSTER]);
}

function startRedis(): void {
  run("redis-server", [
    "--port",
    String(REDIS_PORT),
    "--bind",
    "127.0.0.1",
    "--daemonize",
    "yes",
    "--save",
    "",
    "--appendonly",
    "no",
    "--pidfile",
    `/tmp/latchkey-rig-redis-${REDIS_PORT}.pid`,
  ]);
  // Ask until it answers (each ask takes a few ms), within a deadline.
  const deadline = Date.now() + 10_000;
  for (let i = 0; i < 10_000 && Date.now() < deadline; i++) if (redisAnswers()) return;
  throw new Error("the rig's Redis did not start");
}

function redisAnswers(): boolean {
  try {
    return run("redis-cli", ["-p", String(REDIS_PORT), "ping"]).trim() === "PONG";
  } catch {
    return false;
  }
}

function stopRedis(): void {
  quiet("redis-cli", ["-p", String(REDIS_PORT), "shutdown", "nosave"]);
}

/** One answer of a node: status and parsed body (null when the connection failed). */
export interface Answer {
  status: number;
  body: Json;
  node: number;
}

/** Options of the rig. */
export interface RigOptions {
  nodes?: number;
  /** Environment of every node (REDIS_URL and DATABASE_URL are set by the rig). */
  env?: Record<string, string>;
}

/**
 * Three (or `nodes`) Latchkey processes on the rig's PostgreSQL cluster (port 5433) and Redis
 * (port 6380): a database of the file's own, an emptied Redis, with helpers to kill, stop and
 * restart nodes and to restart PostgreSQL and Redis. Everything is on loopback.
 */
export class Rig {
  readonly rootKey = ROOT_KEY;
  readonly databaseUrl: string;
  readonly redisUrl = `redis://127.0.0.1:${REDIS_PORT}`;
  nodes: NodeProcess[] = [];
  private turn = 0;

  private constructor(
    private readonly options: RigOptions,
    private readonly database: string,
  ) {
    this.databaseUrl = `postgres://postgres@127.0.0.1:${PG_PORT}/${database}`;
  }

  /** Creates the file's database, empties Redis and starts the nodes. */
  static async start(options: RigOptions = {}): Promise<Rig> {
    const rig = new Rig(options, `latchkey_${randomString(12, "abcdefghijklmnopqrstuvwxyz")}`);
    psql(`create database ${rig.database}`);
    run("redis-cli", ["-p", String(REDIS_PORT), "flushall"]);
    // The first node migrates and creates the root key; the others then start together on
    // the ready database.
    rig.nodes.push(await rig.spawn());
    const others = Array.from({ length: (options.nodes ?? 3) - 1 }, () => rig.spawn());
    // Each start is awaited, so that a failed one leaves none of its siblings running.
    const started = await Promise.allSettled(others);
    for (const s of started) if (s.status === "fulfilled") rig.nodes.push(s.value);
    const failed = started.find((s) => s.status === "rejected");
    if (failed) {
      await rig.stop();
      throw failed.reason;
    }
    return rig;
  }

  private spawn(extraEnv: Record<string, string> = {}): Promise<NodeProcess> {
    return startNode({
      databaseUrl: this.databaseUrl,
      env: {
        REDIS_URL: this.redisUrl,
        ROOT_KEY,
        ...this.options.env,
        ...extraEnv,
      },
      startTimeoutMs: 60_000,
    });
  }

  /** Stops PostgreSQL (fast shutdown: sessions are cut, as in a crash of the server process). */
  stopPostgres(): void {
    run("pg_ctlcluster", [PG_VERSION, PG_CLUSTER, "stop", "-m", "fast"]);
  }

  startPostgres(): void {
    run("pg_ctlcluster", [PG_VERSION, PG_CLUSTER, "start"]);
  }

  startRedis(): void {
    startRedis();
  }

  stopRedis(): void {
    stopRedis();
  }

  /** Sends a signal to node `i` and waits for it to exit; returns its exit code. */
  stopNode(i: number, signal: NodeJS.Signals = "SIGTERM"): Promise<number | null> {
    return (this.nodes[i] as NodeProcess).stop(signal);
  }

  /** Starts node `i` again (on a new port), after it was stopped or killed. */
  async restartNode(i: number, extraEnv: Record<string, string> = {}): Promise<void> {
    this.nodes[i] = await this.spawn(extraEnv);
  }

  /** Calls a procedure on node `node` (default: the next node, round robin). */
  async call(
    procedure: string,
    body: unknown,
    opts: { node?: number; auth?: string | null } = {},
  ): Promise<Answer> {
    const node = opts.node ?? this.turn++ % this.nodes.length;
    const auth = opts.auth === undefined ? ROOT_KEY : opts.auth;
    try {
      const res = await fetch(`${(this.nodes[node] as NodeProcess).url}/v2/${procedure}`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          ...(auth === null ? {} : { authorization: `Bearer ${auth}` }),
        },
        body: JSON.stringify(body),
      });
      return { status: res.status, body: await res.json(), node };
    } catch {
      return { status: 0, body: null, node };
    }
  }

  /** Like `call`, but throws unless the answer is 200; returns `data`. */
  async ok(procedure: string, body: unknown, opts: { node?: number } = {}): Promise<Json> {
    const a = await this.call(procedure, body, opts);
    if (a.status !== 200)
      throw new Error(`${procedure} on node ${a.node}: ${a.status} ${JSON.stringify(a.body)}`);
    return a.body.data;
  }

  /** The value of a Prometheus counter or gauge (without labels) on node `node`; 0 when absent. */
  async metric(node: number, name: string): Promise<number> {
    const admin = (this.nodes[node] as NodeProcess).adminUrl;
    const text = await (await fetch(`${admin}/metrics`)).text();
    const line = text.split("\n").find((l) => l.startsWith(`${name} `));
    return line ? Number(line.split(" ").at(-1)) : 0;
  }

  /**
   * Stops every node and drops the file's database. PostgreSQL and Redis are left running for
   * the next file, started again if a test stopped them and failed before it started them.
   */
  async stop(): Promise<void> {
    await Promise.all(this.nodes.map((n) => n.stop("SIGKILL")));
    // Refused (and ignored) when it runs: pg_ctlcluster waits for a start to accept sessions.
    quiet("pg_ctlcluster", [PG_VERSION, PG_CLUSTER, "start"]);
    if (!redisAnswers()) startRedis();
    psql(`drop database if exists ${this.database} with (force)`);
  }
}
