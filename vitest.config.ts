import { defineConfig } from "vitest/config";
import { NGINX } from "./bench/lib/nginx.ts";
import { rigAvailable } from "./test/cluster/rig.js";

// The suite runs once per engine: always on embedded PGlite, and again on PostgreSQL
// when TEST_DATABASE_URL is set (CI sets it). Groups run one after the other so the two
// engines do not compete for this machine's two cores.
const postgresUrl = process.env.TEST_DATABASE_URL;
const redisUrl = process.env.TEST_REDIS_URL;

const skipped: string[] = [];
if (!postgresUrl)
  skipped.push(
    "the PostgreSQL run of the suite and the multi-process tests (set TEST_DATABASE_URL)",
  );
if (!redisUrl) skipped.push("the Redis tests (set TEST_REDIS_URL)");
// The cluster rig makes its own PostgreSQL cluster and Redis; it runs where CI does (both
// variables set, Debian's tools, root).
const cluster = Boolean(postgresUrl && redisUrl) && rigAvailable();
if (!cluster) skipped.push("the cluster tests (need both variables, pg_createcluster and root)");
if (!NGINX) skipped.push("the nginx auth_request test (install Debian's nginx)");
if (skipped.length > 0 && !process.env.VITEST_WORKER_ID) {
  console.log(`\n[latchkey] Skipping ${skipped.join("; ")}.\n`);
}

// Files whose subject does not depend on the server's database engine run once, with the PGlite
// group, not again on PostgreSQL: the packed tarball, the generated clients of other languages,
// the browser pages (/docs, and the console's, whose sessions test/console/sessions.test.ts
// runs on both engines), the console's files, the OpenAPI document and its examples, the Redis limiter, the bin and its
// start-up; and the listeners and doors, whatever the procedures behind them store: connection
// deadlines and caps, the framing, codes and trailers of the Connect and gRPC doors, decoding
// bounds, reflection, gRPC health watches (a server without a database), the pages, and the
// URLs of error types. What is stored, transactions, concurrency, the database's readiness,
// events written, and refusals that write nothing (json-door, grpc-caller-faults) stay on both.
const ENGINE_INDEPENDENT = [
  "test/package/**",
  "test/cli/bin.test.ts",
  "test/cli/first-root-key.test.ts",
  "test/cli/startup.test.ts",
  "test/cli/npm-start.test.ts",
  "test/clients/**",
  "test/server/docs-browser.test.ts",
  "test/console/browser.test.ts",
  "test/console/files.test.ts",
  "test/server/openapi.test.ts",
  "test/ratelimit/redis-*.test.ts",
  "test/server/connection-limits.test.ts",
  "test/server/connect-door.test.ts",
  "test/server/grpc-door.test.ts",
  "test/server/grpc-trailers.test.ts",
  "test/server/request-bounds.test.ts",
  "test/server/grpc-reflection.test.ts",
  "test/server/grpc-health.test.ts",
  "test/server/pages.test.ts",
  "test/security/host-header.test.ts",
];

const shared = {
  include: ["test/**/*.test.ts"],
  exclude: ["test/unit/**", "test/cluster/**", "node_modules/**"],
  globalSetup: ["test/harness/global-setup.ts"],
  // Files of a worker share one module graph and the worker's PGlite databases (emptied
  // between files, test/harness/pglite-pool.ts): importing the server and booting PostgreSQL
  // in WebAssembly once per worker, not once per file, is most of what a file used to cost.
  // The mutation check (scripts/mutation-auth.mjs) changes a source file between runs of one
  // Vitest, so it asks for a fresh module graph per file.
  isolate: process.env.LATCHKEY_TEST_ISOLATE === "1",
  testTimeout: 60_000,
  hookTimeout: 120_000,
};

export default defineConfig({
  test: {
    reporters: ["default"],
    // Two files at a time on this two-core machine: a file spends much of its time waiting
    // (on its server's database thread, on PostgreSQL, on processes it starts).
    maxWorkers: 2,
    projects: [
      {
        // Pure logic: no server, no database, run once.
        test: { name: "unit", include: ["test/unit/**/*.test.ts"], sequence: { groupOrder: 0 } },
      },
      {
        test: {
          ...shared,
          name: "pglite",
          env: { TEST_ENGINE: "pglite" },
          sequence: { groupOrder: 0 },
        },
      },
      ...(postgresUrl
        ? [
            {
              test: {
                ...shared,
                exclude: [...shared.exclude, ...ENGINE_INDEPENDENT],
                name: "postgres",
                env: { TEST_ENGINE: "postgres" },
                sequence: { groupOrder: 1 },
              },
            },
          ]
        : []),
      ...(cluster
        ? [
            {
              test: {
                name: "cluster",
                include: ["test/cluster/**/*.test.ts"],
                env: { TEST_ENGINE: "postgres" },
                // The rig's PostgreSQL cluster and Redis, made once for the project.
                globalSetup: ["test/cluster/global-setup.ts"],
                // One file at a time: a file has the rig's services to itself (some stop them).
                fileParallelism: false,
                maxWorkers: 1,
                testTimeout: 120_000,
                hookTimeout: 180_000,
                sequence: { groupOrder: 2 },
              },
            },
          ]
        : []),
    ],
  },
});
