import { connect } from "node:net";
import { Writable } from "node:stream";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type App, startApp } from "../../src/app.js";
import { createTestDatabase, type TestDatabase } from "../harness/database.js";
import { currentEngine } from "../harness/engine.js";
import { loopbackConfig } from "../harness/server.js";

type Entry = { level: number; msg: string; requestId?: string };

const lines: Entry[] = [];
const sink = new Writable({
  write(chunk, _, done) {
    for (const l of String(chunk).split("\n").filter(Boolean)) lines.push(JSON.parse(l));
    done();
  },
});
const rootKey = "client_gone_root_key_3b8e61f0";
let app: App;
let database: TestDatabase;

beforeAll(async () => {
  database = await createTestDatabase(currentEngine());
  app = await startApp({
    config: loopbackConfig({ rootKey }),
    db: database.db,
    log: pino({ level: "trace" }, sink),
  });
});
afterAll(async () => {
  await app?.stop();
  await database?.drop();
});

/** Sends the head of a request and half its body, then resets the connection (TCP RST). */
async function resetMidBody(path: string, contentType: string): Promise<void> {
  const { port } = new URL(app.url);
  const socket = connect(Number(port), "127.0.0.1");
  await new Promise<void>((resolve, reject) => {
    socket.once("connect", resolve);
    socket.once("error", reject);
  });
  socket.on("error", () => {});
  const head = [
    `POST ${path} HTTP/1.1`,
    "host: 127.0.0.1",
    `content-type: ${contentType}`,
    `authorization: Bearer ${rootKey}`,
    "content-length: 1000",
    "",
    "",
  ].join("\r\n");
  await new Promise<void>((resolve) => socket.write(`${head}{"name":"half`, () => resolve()));
  socket.resetAndDestroy();
}

async function until(found: () => boolean): Promise<void> {
  const deadline = Date.now() + 15_000;
  while (!found()) {
    if (Date.now() > deadline) throw new Error("timed out waiting for the log line");
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** A request after the reset: once its log line is in, the reset's line would be too. */
async function anotherCall(): Promise<string> {
  const res = await fetch(`${app.url}/v2/liveness`);
  const { meta } = (await res.json()) as { meta: { requestId: string } };
  await until(() => lines.some((l) => l.requestId === meta.requestId));
  return meta.requestId;
}

describe("a client that resets its connection mid-request", () => {
  it("on /v2 is logged at debug as a client that went away, never as a 503 or an error", async () => {
    const from = lines.length;
    await resetMidBody("/v2/apis.createApi", "application/json");
    // Whatever the door makes of it: the debug line, or (the fault this guards against) a warning.
    await until(() =>
      lines.slice(from).some((l) => l.msg === "client closed the connection" || l.level >= 40),
    );
    await anotherCall();
    const after = lines.slice(from);
    expect(after.filter((l) => l.level >= 40)).toEqual([]);
    expect(after.find((l) => l.msg === "client closed the connection")?.level).toBe(20);
    expect(after.map((l) => l.msg)).not.toContain("backing service unavailable");
  });

  it("on Connect logs no warning or error either", async () => {
    const from = lines.length;
    await resetMidBody("/latchkey.v2.ApisService/CreateApi", "application/json");
    await anotherCall();
    expect(lines.slice(from).filter((l) => l.level >= 40)).toEqual([]);
  });
});
