import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { currentEngine } from "../../harness/engine.js";
import { type NodeProcess, startNodes } from "../../harness/processes.js";
import { startServer, type TestServer } from "../../harness/server.js";

// Two Latchkey processes on one PostgreSQL database: a change made through one must be
// applied by the other through LISTEN/NOTIFY, long before its cache would expire.
describe.skipIf(currentEngine() !== "postgres")("invalidation across processes", () => {
  let s: TestServer;
  let nodes: NodeProcess[] = [];
  beforeAll(async () => {
    s = await startServer();
    nodes = await startNodes(2, {
      databaseUrl: s.databaseUrl as string,
      rootKey: s.rootKey,
      env: { CACHE_TTL_MS: "30000" },
    });
  });
  afterAll(async () => {
    await Promise.all(nodes.map((n) => n.stop()));
    await s.stop();
  });

  async function getApi(node: NodeProcess, apiId: string): Promise<number> {
    const res = await fetch(`${node.url}/v2/apis.getApi`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${s.rootKey}` },
      body: JSON.stringify({ apiId }),
    });
    return res.status;
  }

  it("applies a deleteApi made on one process on the other", async () => {
    const [a, b] = nodes as [NodeProcess, NodeProcess];
    const apiId = await s.seed.api();
    // B caches the API (and the root key).
    expect(await getApi(b, apiId)).toBe(200);
    expect(await getApi(b, apiId)).toBe(200);
    const deleted = await fetch(`${a.url}/v2/apis.deleteApi`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${s.rootKey}` },
      body: JSON.stringify({ apiId }),
    });
    expect(deleted.status).toBe(200);
    const started = performance.now();
    const deadline = Date.now() + 10_000;
    let status = 200;
    while (status === 200 && Date.now() < deadline) status = await getApi(b, apiId);
    const latencyMs = performance.now() - started;
    console.log(`deleteApi on A seen by B after ${latencyMs.toFixed(1)} ms`);
    expect(status).toBe(404);
  });

  it("applies a root key revocation on every process", async () => {
    const key = await s.seed.rootKeyWithId(["*.*.*"]);
    const call = (node: NodeProcess) =>
      fetch(`${node.url}/v2/apis.getApi`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${key.secret}` },
        body: JSON.stringify({ apiId: "api_x" }),
      }).then((r) => r.status);
    for (const n of nodes) expect(await call(n)).toBe(404);
    await s.seed.revokeRootKey(key.id);
    const started = performance.now();
    for (const n of nodes) {
      const deadline = Date.now() + 10_000;
      let status = 404;
      while (status === 404 && Date.now() < deadline) status = await call(n);
      expect(status).toBe(401);
    }
    console.log(
      `root key revocation seen by both processes after ${(performance.now() - started).toFixed(1)} ms`,
    );
  });
});
