import { pino } from "pino";
import { afterAll, beforeAll } from "vitest";
import { createRootKey, createWorkspace, revokeRootKey } from "../../src/admin/commands.js";
import { type App, startApp } from "../../src/app.js";
import { type Config, loadConfig } from "../../src/config.js";
import { UNLIMITED } from "../../src/domain/credits.js";
import { newId } from "../../src/domain/ids.js";
import { randomString } from "../../src/domain/random.js";
import { ALL_PERMISSIONS } from "../../src/domain/root-permissions.js";
import type { Logger } from "../../src/log.js";
import type { Db } from "../../src/storage/db.js";
import { type ApiRow, apiInsert } from "../../src/storage/queries/apis.js";
import { identityInsert } from "../../src/storage/queries/identities.js";
import { permissionInsert } from "../../src/storage/queries/permissions.js";
import type { Tracing } from "../../src/tracing/tracing.js";
import { TestClock } from "./clock.js";
import { createTestDatabase, type TestDatabase } from "./database.js";
import {
  type CallResult,
  callConnect,
  callJson,
  createTransports,
  DOORS,
  type TestDoor,
} from "./doors.js";
import { currentEngine, type Engine } from "./engine.js";
import { diffSnapshots, type Snapshot, snapshot } from "./snapshot.js";
import { type Api, type TypedAuth, typedApi } from "./typed.js";

/** Options of a test server. */
export interface StartOptions {
  engine?: Engine;
  config?: Partial<Config>;
  /** Puts something between the server and its database (a test that makes it hang). */
  wrapDb?: (db: Db) => Db;
  /** The server's logger (default: pino at TEST_LOG_LEVEL, else silent). */
  log?: Logger;
  /** Traces the server's calls with this Tracing (the test shuts it down). */
  tracing?: Tracing;
}

/** Creates rows with unique ids directly in storage, independent of the procedures under test. */
export interface Seeder {
  /** A new workspace; returns its id. */
  workspace(): Promise<string>;
  /** A new root key with these permissions (default workspace unless given); returns the secret. */
  rootKey(permissions: string[], workspaceId?: string): Promise<string>;
  /** Like rootKey, returning the id too. */
  rootKeyWithId(
    permissions: string[],
    workspaceId?: string,
  ): Promise<{ id: string; secret: string }>;
  /** Revokes a root key the way the CLI does. */
  revokeRootKey(id: string): Promise<void>;
  /**
   * A new API in a workspace (default workspace unless given); returns its id. Its settings
   * are those createApi gives (checksummed keys, leaks disable) unless `settings` says.
   */
  api(
    workspaceId?: string,
    name?: string,
    settings?: Partial<Pick<ApiRow, "keyFormat" | "leakPolicy">>,
  ): Promise<string>;
  /** A new identity (random externalId unless given); returns its id and externalId. */
  identity(opts?: {
    externalId?: string;
    workspaceId?: string;
  }): Promise<{ id: string; externalId: string }>;
  /** A new permission with this slug; returns its id. */
  permission(slug: string, workspaceId?: string): Promise<string>;
  /** A new key made through keys.createKey (default workspace, a new API unless given). */
  key(
    body?: Record<string, unknown>,
    rootKey?: string,
  ): Promise<{ keyId: string; key: string; apiId: string }>;
}

/** A real server on port 0 with everything a test needs to talk to it. */
export interface TestServer {
  app: App;
  url: string;
  /** The admin listener's base URL: /metrics, /health/live, /health/ready. */
  adminUrl: string;
  engine: Engine;
  db: Db;
  /** The PostgreSQL URL of the server's database (undefined on PGlite). */
  databaseUrl: string | undefined;
  clock: TestClock;
  /** A root key with `*.*.*` in the default workspace. */
  rootKey: string;
  workspaceId: string;
  seed: Seeder;
  /**
   * Calls a procedure through a door. `auth` is a root key (default: the all-powerful
   * one), null for no Authorization header, or `{ header }` for a raw header value.
   */
  call(door: TestDoor, procedure: string, body: unknown, auth?: Auth): Promise<CallResult>;
  /**
   * Typed clients of every service through the gRPC port, authenticated with the
   * all-powerful root key: `await s.api.keys.createKey({ apiId })`.
   */
  api: Api;
  /** The same clients authenticated as `auth` (a root key, null for none, or a raw header). */
  as(auth: TypedAuth): Api;
  /** GET on the admin port (`/metrics`): the status and the body as text. */
  admin(path: string): Promise<{ status: number; headers: Headers; text: string }>;
  /** Raw /v2 request for transport-level tests. */
  // biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON bodies
  raw(path: string, init?: RequestInit): Promise<{ status: number; headers: Headers; body: any }>;
  snapshot(): Promise<Snapshot>;
  /** Table-by-table differences since a snapshot; `{}` when nothing changed. */
  changesSince(before: Snapshot): Promise<ReturnType<typeof diffSnapshots>>;
  stop(): Promise<void>;
}

export { DOORS, type TestDoor };

/** How a test call authenticates. */
export type Auth = string | null | { header: string };

/**
 * The configuration of a server a test starts itself (`startApp`): the defaults, `env` read as
 * the environment, free loopback ports for every listener, no gRPC port unless asked for,
 * and `overrides` last.
 */
export function loopbackConfig(overrides: Partial<Config> = {}, env: Record<string, string> = {}) {
  return {
    ...loadConfig(env),
    port: 0,
    grpcPort: undefined,
    adminPort: 0,
    host: "127.0.0.1",
    ...overrides,
  } satisfies Config;
}

/** Starts the real server on 127.0.0.1:0 against a fresh database of the run's engine. */
export async function startServer(opts: StartOptions = {}): Promise<TestServer> {
  const engine = opts.engine ?? currentEngine();
  const rootKey = `test_root_${randomString(24)}`;
  const config: Config = loopbackConfig({
    grpcPort: 0,
    rootKey,
    logLevel: process.env.TEST_LOG_LEVEL ?? "silent",
    shutdownTimeoutMs: 5_000,
    ...opts.config,
  });
  // The server's pool as the configuration says (the server is handed this database).
  const database: TestDatabase = await createTestDatabase(engine, {
    max: config.databasePoolSize,
    statementTimeoutMs: config.statementTimeoutMs,
  });
  const clock = new TestClock();
  const app = await startApp({
    config,
    db: opts.wrapDb ? opts.wrapDb(database.db) : database.db,
    clock,
    log: opts.log ?? pino({ level: config.logLevel }),
    ...(opts.tracing ? { tracing: opts.tracing } : {}),
  });
  const deps = { db: database.db, bus: app.deps.bus, clock, keyHashing: config.keyHashing };
  const ws = await database.db.query<{ id: string }>("select id from workspaces where is_default");
  const workspaceId = (ws[0] as { id: string }).id;
  const transports = createTransports(app.url, `http://127.0.0.1:${app.grpcPort}`);
  const as = (auth: TypedAuth) => typedApi(transports.grpc, auth);

  const seed = {
    workspace: () => createWorkspace(deps, `ws ${randomString(6)}`),
    async rootKey(permissions, w = workspaceId) {
      return (await createRootKey(deps, w, permissions, "test")).secret;
    },
    rootKeyWithId: (permissions, w = workspaceId) => createRootKey(deps, w, permissions, "test"),
    revokeRootKey: (id) => revokeRootKey(deps, id),
    async api(w = workspaceId, name = `api ${randomString(6)}`, settings = {}) {
      const id = newId("api");
      await apiInsert(database.db, {
        id,
        workspaceId: w,
        name,
        keyFormat: settings.keyFormat ?? "checksummed",
        leakPolicy: settings.leakPolicy ?? "disable",
        createdAt: clock.now(),
      });
      return id;
    },
  } as Seeder;

  seed.identity = async (opts = {}) => {
    const id = newId("id");
    const externalId = opts.externalId ?? `user_${randomString(10)}`;
    await identityInsert(database.db, {
      id,
      workspaceId: opts.workspaceId ?? workspaceId,
      externalId,
      meta: null,
      createdAt: clock.now(),
      updatedAt: null,
      deletedAt: null,
      ...UNLIMITED,
    });
    return { id, externalId };
  };
  seed.key = async (body = {}, key = rootKey) => {
    const apiId = (body.apiId as string | undefined) ?? (await seed.api());
    const res = await callJson(
      app.url,
      "keys.createKey",
      { ...body, apiId },
      { authorization: `Bearer ${key}` },
    );
    if (res.status !== 200) throw new Error(`seed.key failed: ${JSON.stringify(res.error)}`);
    return { keyId: res.data.keyId, key: res.data.key, apiId };
  };
  seed.permission = async (slug, w = workspaceId) => {
    const id = newId("perm");
    await permissionInsert(database.db, {
      id,
      workspaceId: w,
      name: slug,
      slug,
      description: null,
      createdAt: clock.now(),
    });
    return id;
  };

  return {
    app,
    url: app.url,
    // A test server always serves its admin port (serveAdmin is not turned off here).
    adminUrl: app.adminUrl as string,
    engine,
    db: database.db,
    databaseUrl: database.url,
    clock,
    rootKey,
    workspaceId,
    seed,
    api: as(rootKey),
    as,
    call(door, procedure, body, auth = rootKey) {
      const headers: Record<string, string> =
        auth === null
          ? {}
          : { authorization: typeof auth === "string" ? `Bearer ${auth}` : auth.header };
      return door === "json"
        ? callJson(app.url, procedure, body, headers)
        : callConnect(transports[door], procedure, body, headers);
    },
    async admin(path) {
      const res = await fetch(`${app.adminUrl as string}${path}`);
      return { status: res.status, headers: res.headers, text: await res.text() };
    },
    async raw(path, init = {}) {
      const res = await fetch(`${app.url}${path}`, init);
      const text = await res.text();
      let body: unknown = text;
      try {
        body = JSON.parse(text);
      } catch {}
      return { status: res.status, headers: res.headers, body };
    },
    snapshot: () => snapshot(database.db),
    async changesSince(before) {
      return diffSnapshots(before, await snapshot(database.db));
    },
    async stop() {
      await app.stop();
      await database.drop();
    },
  };
}

/**
 * Starts one server for the test file (beforeAll) and stops it afterwards (afterAll).
 * Returns a handle that forwards to that server once it runs, so a file reads
 * `const s = useServer();` and then `s.call(...)` in its tests.
 */
export function useServer(opts: StartOptions = {}): TestServer {
  let server: TestServer | undefined;
  beforeAll(async () => {
    server = await startServer(opts);
  });
  afterAll(() => server?.stop());
  return new Proxy({} as TestServer, {
    get(_, prop) {
      if (!server) throw new Error("the server is not started yet: use it inside a test or hook");
      const value = Reflect.get(server, prop);
      return typeof value === "function" ? value.bind(server) : value;
    },
  });
}

/** The all-permissions grant, for readability in tests. */
export { ALL_PERMISSIONS };
