import { Code, ConnectError } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { VerifyKeyCode } from "../../../gen/latchkey/v2/keys_pb.js";
import { currentEngine } from "../../harness/engine.js";
import { type NodeProcess, startNodes } from "../../harness/processes.js";
import { startServer, type TestServer } from "../../harness/server.js";
import { type Api, typedApi } from "../../harness/typed.js";

// Two Latchkey processes on one PostgreSQL database: a change made through one must be
// applied by the other through LISTEN/NOTIFY, long before its cache would expire.

/** Typed clients of a process, through its main port, as `rootKey`. */
const clientOf = (node: NodeProcess, rootKey: string): Api =>
  typedApi(createConnectTransport({ baseUrl: node.url, httpVersion: "1.1" }), rootKey);

/** The Connect code a getApi call ends with (OK when it answers). */
const getApiCode = (api: Api, apiId: string): Promise<Code | "ok"> =>
  api.apis.getApi({ apiId }).then(
    () => "ok" as const,
    (err: unknown) => ConnectError.from(err).code,
  );

/** Polls `api` with getApi until the code is no longer `while`; gives up after 10 s. */
async function getApiUntilNot(api: Api, apiId: string, while_: Code | "ok") {
  const deadline = Date.now() + 10_000;
  let code = while_;
  while (code === while_ && Date.now() < deadline) code = await getApiCode(api, apiId);
  return code;
}

/** The outcome of verifying `key` on `api` from `clientIp`. */
const outcomeOf = async (api: Api, key: string, clientIp: string) =>
  (await api.keys.verifyKey({ key, clientIp })).data?.code;

/** Polls verifications on `api` until the outcome is no longer `while_`; gives up after 10 s. */
async function verifyUntilNot(api: Api, key: string, clientIp: string, while_: VerifyKeyCode) {
  const deadline = Date.now() + 10_000;
  let code = while_;
  while (code === while_ && Date.now() < deadline)
    code = (await outcomeOf(api, key, clientIp)) ?? while_;
  return code;
}

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

  it("applies a deleteApi made on one process on the other", async () => {
    const [a, b] = (nodes as [NodeProcess, NodeProcess]).map((n) => clientOf(n, s.rootKey)) as [
      Api,
      Api,
    ];
    const apiId = await s.seed.api();
    // B caches the API (and the root key).
    expect(await getApiCode(b, apiId)).toBe("ok");
    expect(await getApiCode(b, apiId)).toBe("ok");
    await a.apis.deleteApi({ apiId });
    const started = performance.now();
    const code = await getApiUntilNot(b, apiId, "ok");
    console.log(`deleteApi on A seen by B after ${(performance.now() - started).toFixed(1)} ms`);
    expect(code).toBe(Code.NotFound);
  });

  it("applies an updateApi's network ranges made on one process to the other's cached verifications", async () => {
    const [a, b] = (nodes as [NodeProcess, NodeProcess]).map((n) => clientOf(n, s.rootKey)) as [
      Api,
      Api,
    ];
    const { key, apiId } = await s.seed.key();
    // B caches the key's verification record, which holds its API's (absent) ranges.
    expect(await outcomeOf(b, key, "198.51.100.1")).toBe(VerifyKeyCode.VALID);
    expect(await outcomeOf(b, key, "198.51.100.1")).toBe(VerifyKeyCode.VALID);
    await a.apis.updateApi({ apiId, allowedCidrs: ["10.0.0.0/8"] });
    const started = performance.now();
    expect(await verifyUntilNot(b, key, "198.51.100.1", VerifyKeyCode.VALID)).toBe(
      VerifyKeyCode.FORBIDDEN,
    );
    console.log(
      `updateApi's ranges on A seen by B after ${(performance.now() - started).toFixed(1)} ms`,
    );
    expect(await outcomeOf(b, key, "10.0.0.1")).toBe(VerifyKeyCode.VALID);
    // And their removal.
    await a.apis.updateApi({ apiId, updateMask: { paths: ["allowed_cidrs"] } });
    expect(await verifyUntilNot(b, key, "198.51.100.1", VerifyKeyCode.FORBIDDEN)).toBe(
      VerifyKeyCode.VALID,
    );
  });

  it("applies a root key revocation on every process", async () => {
    const key = await s.seed.rootKeyWithId(["*.*.*"]);
    const clients = nodes.map((n) => clientOf(n, key.secret));
    // Each process authenticates (and caches) the key: the unknown API is a 404, not a 401.
    for (const c of clients) expect(await getApiCode(c, "api_x")).toBe(Code.NotFound);
    await s.seed.revokeRootKey(key.id);
    const started = performance.now();
    for (const c of clients) {
      expect(await getApiUntilNot(c, "api_x", Code.NotFound)).toBe(Code.Unauthenticated);
    }
    console.log(
      `root key revocation seen by both processes after ${(performance.now() - started).toFixed(1)} ms`,
    );
  });
});
