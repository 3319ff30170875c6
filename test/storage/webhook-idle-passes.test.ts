import { describe, expect, it } from "vitest";
import type { Db } from "../../src/storage/db.js";
import { CreditPass } from "../../src/webhooks/credit-pass.js";
import { EndpointPresence } from "../../src/webhooks/presence.js";
import { useServer } from "../harness/server.js";
import { CONFIG, newEndpoint } from "../procedures/webhooks/endpoints.js";

// The webhook machinery of a node polls every second. With nothing to do it must cost next to
// nothing: a transaction that takes a cursor row for update writes to it, and on the embedded
// engine those writes were most of an idle server's CPU. These tests count what reaches the
// (real) database.

// This server's own passes run at start, then once a minute: the counts below are of ours.
const s = useServer({ config: { ...CONFIG, webhookPollIntervalMs: 60_000 } });

/** The same database, with every query and transaction it is asked for written down. */
function counting(db: Db): { db: Db; asked: string[] } {
  const asked: string[] = [];
  const proxy = new Proxy(db, {
    get(target, name, receiver) {
      const value = Reflect.get(target, name, receiver);
      if (typeof value !== "function") return value;
      if (name === "query" || name === "transaction") {
        return (...args: unknown[]) => {
          asked.push(name === "query" ? String(args[0]) : "transaction");
          return value.apply(target, args);
        };
      }
      return value.bind(target);
    },
  });
  return { db: proxy, asked };
}

describe("the credit pass of an idle node", () => {
  it("takes the cursor once, then only looks for new entries until there are some", async () => {
    const { db, asked } = counting(s.db);
    const pass = new CreditPass(db);
    // The first run takes the cursor (again if this server's own pass held it just then).
    await pass.run(s.clock.now());
    expect(asked.filter((q) => q === "transaction").length).toBeGreaterThan(0);
    const deadline0 = Date.now() + 15_000;
    while (asked.at(-1) === "transaction" || asked.at(-2) === "transaction") {
      if (Date.now() > deadline0) throw new Error("the pass never learned where the cursor is");
      asked.length = 0;
      await pass.run(s.clock.now());
    }
    asked.length = 0;
    for (let i = 0; i < 5; i++) expect(await pass.run(s.clock.now())).toBe(0);
    expect(asked.filter((q) => q === "transaction")).toEqual([]);
    expect(asked).toHaveLength(5);

    // A verification that spends a credit writes a ledger entry: the next pass reads it.
    const k = await s.seed.key({ credits: { remaining: 10 } });
    const v = await s.call("json", "keys.verifyKey", { key: k.key });
    expect(v.status).toBe(200);
    const deadline = Date.now() + 15_000;
    let read = 0;
    while (read === 0 && Date.now() < deadline) read += await pass.run(s.clock.now());
    expect(read).toBeGreaterThan(0);
  });
});

describe("whether any endpoint is enabled", () => {
  it("is read once per ttl, read again when an endpoint changes, and says so", async () => {
    const { db, asked } = counting(s.db);
    const listeners: ((e: { kind: string; workspaceId?: string }) => void)[] = [];
    const bus = { subscribe: (l: (typeof listeners)[number]) => listeners.push(l) };
    const presence = new EndpointPresence(db, s.clock, bus as never, 10_000);
    expect(await presence.any()).toBe(false);
    expect(await presence.any()).toBe(false);
    expect(asked).toHaveLength(1);

    await newEndpoint(s);
    // Within the ttl the answer stands; the change's notification drops it.
    expect(await presence.any()).toBe(false);
    for (const l of listeners) l({ kind: "webhooks", workspaceId: s.workspaceId });
    expect(await presence.any()).toBe(true);
    expect(asked).toHaveLength(2);

    // And the ttl alone ends it.
    await s.db.query("update webhook_endpoints set enabled = false");
    s.clock.advance(10_001);
    expect(await presence.any()).toBe(false);
    expect(asked).toHaveLength(3);
  });
});
