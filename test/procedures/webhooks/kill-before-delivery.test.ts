import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTransports } from "../../harness/doors.js";
import { currentEngine } from "../../harness/engine.js";
import { type NodeProcess, startNode } from "../../harness/processes.js";
import { useServer } from "../../harness/server.js";
import { typedApi } from "../../harness/typed.js";
import { eventually, type Receiver, startReceiver } from "../../harness/webhook-receiver.js";

// The outbox is written in the transaction of the change: a process killed with SIGKILL
// after a change committed and before its delivery was answered loses nothing. The next
// process sends it, with the same webhook-id, once the dead process's claim has lapsed.

// The processes and the test share one database only on PostgreSQL.
describe.skipIf(currentEngine() !== "postgres")("webhooks across a SIGKILL", () => {
  const s = useServer();
  const env = {
    WEBHOOK_ALLOW_PRIVATE: "true",
    WEBHOOK_POLL_INTERVAL_MS: "50",
    WEBHOOK_TIMEOUT_MS: "5000",
  };
  let receiver: Receiver;
  const nodes: NodeProcess[] = [];
  beforeAll(async () => {
    // The test's own server shares the database: its dispatcher must not deliver.
    await s.app.webhooks.stop();
    receiver = await startReceiver((n) => (n === 0 ? "hang" : 200));
  });
  afterAll(async () => {
    for (const n of nodes) await n.stop("SIGKILL");
    await receiver.close();
  });

  it("delivers after a restart what a killed process had committed", async () => {
    const first = await startNode({
      databaseUrl: s.databaseUrl as string,
      rootKey: s.rootKey,
      env,
    });
    nodes.push(first);
    const api = typedApi(createTransports(first.url, first.url).connect, s.rootKey);
    await api.webhooks.createEndpoint({ url: receiver.url, eventTypes: ["key.created"] });
    const apiId = await s.seed.api();
    const made = await api.keys.createKey({ apiId });
    // The delivery is on its way (the receiver holds it unanswered) when the process dies.
    const [sent] = await receiver.waitFor(1);
    expect(await first.stop("SIGKILL")).toBeNull();
    const [row] = await s.db.query<{ status: string }>(
      "select status from webhook_deliveries where payload like $1",
      [`%${made.data?.keyId}%`],
    );
    expect(row?.status).toBe("pending");

    const second = await startNode({
      databaseUrl: s.databaseUrl as string,
      rootKey: s.rootKey,
      env,
    });
    nodes.push(second);
    const [, again] = await receiver.waitFor(2, 60_000);
    expect(again?.headers["webhook-id"]).toBe(sent?.headers["webhook-id"]);
    expect(JSON.parse(again?.body as string).data.keyId).toBe(made.data?.keyId);
    await eventually(async () => {
      const [d] = await s.db.query<{ status: string }>(
        "select status from webhook_deliveries where payload like $1",
        [`%${made.data?.keyId}%`],
      );
      return d?.status === "delivered" ? true : undefined;
    }, 30_000);
  });
});
