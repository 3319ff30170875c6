import { Writable } from "node:stream";
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { startApp } from "../../src/app.js";
import { createTestDatabase } from "../harness/database.js";
import { currentEngine } from "../harness/engine.js";
import { loopbackConfig } from "../harness/server.js";

describe("logs", () => {
  it("are JSON lines with the request id, and never contain a plaintext key or root key", async () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk, _, done) {
        lines.push(...String(chunk).split("\n").filter(Boolean));
        done();
      },
    });
    const database = await createTestDatabase(currentEngine());
    const rootKey = "log_test_root_key_7f3a9c2e51";
    const app = await startApp({
      config: loopbackConfig({ rootKey }),
      db: database.db,
      log: pino({ level: "trace" }, sink),
    });
    try {
      const call = (key: string, body: unknown) =>
        fetch(`${app.url}/v2/apis.createApi`, {
          method: "POST",
          headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
          body: JSON.stringify(body),
        }).then((r) => r.json() as Promise<{ meta: { requestId: string } }>);
      const ok = await call(rootKey, { name: "logged" });
      await call("wrong_key_should_not_be_logged", { name: "x" });
      await call(rootKey, { name: "x" });
      const apiRes = await fetch(`${app.url}/v2/apis.createApi`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${rootKey}` },
        body: JSON.stringify({ name: "logged api" }),
      }).then((r) => r.json() as Promise<{ data: { apiId: string } }>);
      const created = await fetch(`${app.url}/v2/keys.createKey`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${rootKey}` },
        body: JSON.stringify({ apiId: apiRes.data.apiId, prefix: "logged" }),
      }).then((r) => r.json() as Promise<{ data: { key: string } }>);
      await fetch(`${app.url}/v2/keys.whoami`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${rootKey}` },
        body: JSON.stringify({ key: created.data.key }),
      });
      const text = lines.join("\n");
      expect(created.data.key).toMatch(/^logged_/);
      expect(text).not.toContain(created.data.key);
      expect(text).not.toContain(created.data.key.slice("logged_".length));
      expect(text).not.toContain(rootKey);
      expect(text).not.toContain("wrong_key_should_not_be_logged");
      const entries = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
      expect(entries.find((e) => e.requestId === ok.meta.requestId)).toMatchObject({
        procedure: "apis.createApi",
        door: "json",
        status: 200,
      });
    } finally {
      await app.stop();
      await database.drop();
    }
  });
});
