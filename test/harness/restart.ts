// A server started, stopped and started again on the same database (PGlite's data directory
// opened again, or the same PostgreSQL database), for what must outlive a restart.
import pino from "pino";
import { expect } from "vitest";
import { type App, startApp } from "../../src/app.js";
import { loadConfig } from "../../src/config.js";
import { scratchDirs, TEST_START_ENV } from "../cli/in-process.js";
import { createTestDatabase } from "./database.js";
import { currentEngine } from "./engine.js";

/** What a step runs against: the server of that step. */
export interface Step {
  /** POST /v2/<procedure> with the root key: the answer's data (the test fails unless 200). */
  // biome-ignore lint/suspicious/noExplicitAny: tests read the answer's JSON as it comes
  ok(procedure: string, body: unknown): Promise<any>;
}

/**
 * Runs `before` on a server, stops it, then `after` on a server started again on the same
 * database (this run's engine), and removes the database.
 */
export async function acrossRestart(
  name: string,
  before: (s: Step) => Promise<void>,
  after: (s: Step) => Promise<void>,
): Promise<void> {
  const rootKey = `${name}_restart_root_key_0123456789`;
  const database =
    currentEngine() === "postgres" ? await createTestDatabase("postgres") : undefined;
  const env: Record<string, string> = {
    ...TEST_START_ENV,
    LOG_LEVEL: "silent",
    ROOT_KEY: rootKey,
    ...(database?.url ? { DATABASE_URL: database.url } : { DATA_DIR: dataDir() }),
  };
  const run = async (step: (s: Step) => Promise<void>) => {
    const app = await startApp({ config: loadConfig(env), log: pino({ level: "silent" }) });
    try {
      await step({ ok: (procedure, body) => ok(app, rootKey, procedure, body) });
    } finally {
      await app.stop();
    }
  };
  try {
    await run(before);
    await run(after);
  } finally {
    await database?.drop();
  }
}

const dataDir = scratchDirs("latchkey-restart-");

async function ok(app: App, rootKey: string, procedure: string, body: unknown) {
  const res = await fetch(`${app.url}/v2/${procedure}`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${rootKey}` },
    body: JSON.stringify(body),
  });
  // biome-ignore lint/suspicious/noExplicitAny: the test reads the answer's JSON as it comes
  const json: any = await res.json();
  expect(res.status, JSON.stringify(json)).toBe(200);
  return json.data;
}
