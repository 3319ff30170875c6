import { describe, expect, it } from "vitest";
import { type Invalidation, InvalidationBus, payloads } from "../../../src/cache/bus.js";
import type { Db } from "../../../src/storage/db.js";

const keyEvent = (i: number): Invalidation => ({
  kind: "key",
  workspaceId: "ws_0123456789abcdef",
  apiId: "api_0123456789abcdef",
  id: `key_${String(i).padStart(16, "0")}`,
  hash: `${"h".repeat(43)}=`,
});

describe("invalidation payloads", () => {
  it("split a large change over several notifications under 8000 bytes, in order", () => {
    const events = Array.from({ length: 1000 }, (_, i) => keyEvent(i));
    const out = payloads("node_a", events);
    console.log(`1,000 key invalidations: ${out.length} notifications`);
    expect(out.length).toBeGreaterThan(1);
    for (const p of out) expect(Buffer.byteLength(p)).toBeLessThan(8000);
    const parsed = out.map((p) => JSON.parse(p) as { o: string; e: Invalidation[] });
    expect(parsed.every((p) => p.o === "node_a")).toBe(true);
    expect(parsed.flatMap((p) => p.e)).toEqual(events);
  });

  it("send nothing for no change, and one notification for a small one", () => {
    expect(payloads("n", [])).toEqual([]);
    expect(payloads("n", [{ kind: "rootKeys" }])).toEqual(['{"o":"n","e":[{"kind":"rootKeys"}]}']);
  });
});

describe("a stopped bus", () => {
  it("ignores notifications that still arrive (a LISTEN re-subscribed after a reconnect)", async () => {
    let deliver: (payload: string) => void = () => {};
    const db = {
      // Like postgres.js after a reconnect: the unlisten it gave removes nothing.
      listen: async (_channel: string, onNotify: (payload: string) => void) => {
        deliver = onNotify;
        return async () => {};
      },
    } as unknown as Db;
    const bus = new InvalidationBus("node_b");
    const seen: Invalidation[] = [];
    bus.subscribe((e) => seen.push(e));
    await bus.start(db);
    const from = (o: string) => JSON.stringify({ o, e: [{ kind: "rootKeys" }] });
    deliver(from("node_a"));
    expect(seen).toEqual([{ kind: "rootKeys" }]);
    await bus.stop();
    deliver(from("node_a"));
    expect(seen).toHaveLength(1);
  });
});
