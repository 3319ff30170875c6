import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { randomString } from "../../../src/domain/random.js";
import { createTransports } from "../../harness/doors.js";
import { currentEngine } from "../../harness/engine.js";
import { type NodeProcess, startNode } from "../../harness/processes.js";
import { typedApi } from "../../harness/typed.js";
import { eventually, type Receiver, startReceiver } from "../../harness/webhook-receiver.js";

// The embedded engine's case of kill-before-delivery.test.ts: a process on PGlite (a data
// directory of its own) killed with SIGKILL after a change committed and before its delivery
// was answered; the next process on the same directory sends it, with the same webhook-id.

describe.skipIf(currentEngine() !== "pglite")("webhooks across a SIGKILL, embedded", () => {
  const dataDir = mkdtempSync(join(tmpdir(), "latchkey-webhooks-"));
  const rootKey = `test_root_${randomString(24)}`;
  const env = {
    DATA_DIR: dataDir,
    WEBHOOK_ALLOW_PRIVATE: "true",
    WEBHOOK_POLL_INTERVAL_MS: "50",
    WEBHOOK_TIMEOUT_MS: "5000",
  };
  let receiver: Receiver;
  const nodes: NodeProcess[] = [];
  beforeAll(async () => {
    receiver = await startReceiver((n) => (n === 0 ? "hang" : 200));
  });
  afterAll(async () => {
    for (const n of nodes) await n.stop("SIGKILL");
    await receiver.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const apiOf = (node: NodeProcess) =>
    typedApi(createTransports(node.url, node.url).connect, rootKey);

  it("delivers after a restart what a killed process had committed", async () => {
    const first = await startNode({ databaseUrl: "", rootKey, env, startTimeoutMs: 60_000 });
    nodes.push(first);
    const api = apiOf(first);
    const made = await api.webhooks.createEndpoint({
      url: receiver.url,
      eventTypes: ["key.created"],
    });
    const endpointId = made.data?.endpoint?.id as string;
    const { data } = await api.apis.createApi({ name: "killed" });
    const key = await api.keys.createKey({ apiId: data?.apiId as string });
    const [sent] = await receiver.waitFor(1);
    expect(await first.stop("SIGKILL")).toBeNull();

    const second = await startNode({ databaseUrl: "", rootKey, env, startTimeoutMs: 60_000 });
    nodes.push(second);
    const [, again] = await receiver.waitFor(2, 60_000);
    expect(again?.headers["webhook-id"]).toBe(sent?.headers["webhook-id"]);
    expect(JSON.parse(again?.body as string).data.keyId).toBe(key.data?.keyId);
    const delivered = await eventually(async () => {
      const [d] = (await apiOf(second).webhooks.listDeliveries({ endpointId })).data;
      return d?.status === "delivered" ? d : undefined;
    }, 30_000);
    expect(delivered.attempts.at(-1)).toMatchObject({ status: "delivered", responseStatus: 200 });
    // Two starts of the embedded engine and the dead process's lease: longer than most tests.
  }, 180_000);
});
