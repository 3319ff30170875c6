import { Code } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { useServer } from "../../harness/server.js";
import { refusal } from "../../harness/typed.js";

// ratelimit.multiLimit: decides up to 100 limits all-or-nothing (every cost is taken or
// none), reporting each limit's own state in request order.

const s = useServer();
let n = 0;
const HOUR = 3_600_000n;

describe("ratelimit.multiLimit", () => {
  it("is all-or-nothing and reports each limit in request order", async () => {
    const ns = `multi.${++n}`;
    const minute = { namespace: ns, identifier: "u", limit: 1n, duration: 60_000n };
    const month = {
      namespace: `${ns}.month`,
      identifier: "u",
      limit: 200n,
      duration: 2_592_000_000n,
    };
    const first = await s.api.ratelimit.multiLimit({ limits: [month, minute] });
    expect(first.data?.passed).toBe(true);
    expect(first.data?.limits.map((l) => l.remaining)).toEqual([199n, 0n]);
    const second = await s.api.ratelimit.multiLimit({ limits: [month, minute] });
    expect(second.data?.passed).toBe(false);
    expect(second.data?.limits).toEqual([
      expect.objectContaining({
        namespace: `${ns}.month`,
        identifier: "u",
        limit: 200n,
        passed: true,
        remaining: 199n,
      }),
      expect.objectContaining({ namespace: ns, identifier: "u", passed: false, remaining: 0n }),
    ]);
    // Refused whichever limit runs out, the last or the first.
    const reordered = await s.api.ratelimit.multiLimit({ limits: [minute, month] });
    expect(reordered.data?.passed).toBe(false);
    expect(reordered.data?.limits.map((l) => [l.namespace, l.passed])).toEqual([
      [ns, false],
      [`${ns}.month`, true],
    ]);
    // The refused calls took nothing from the month's counter.
    expect((await s.api.ratelimit.limit(month)).data?.remaining).toBe(198n);
  });

  it("rejects an empty list and more than 100 limits with 400 at /limits", async () => {
    const one = { namespace: "x", identifier: "u", limit: 1n, duration: 1000n };
    for (const limits of [[], Array.from({ length: 101 }, () => one)]) {
      const r = await refusal(s.api.ratelimit.multiLimit({ limits }));
      expect(r.code).toBe(Code.InvalidArgument);
      expect(r.status).toBe(400);
      expect(r.errors.map((e) => e.location)).toEqual(["/limits"]);
    }
  });
});

describe("on the /v2 JSON door", () => {
  it("accepts the SDK's bare array as the list of limits", async () => {
    const limit = { namespace: `bare.${++n}`, identifier: "u", limit: 2n, duration: HOUR };
    const res = await s.raw("/v2/ratelimit.multiLimit", {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${s.rootKey}` },
      body: JSON.stringify([{ ...limit, limit: 2, duration: 3_600_000 }]),
    });
    expect(res.status).toBe(200);
    // The bare array's limit took one of the two.
    expect((await s.api.ratelimit.limit(limit)).data).toMatchObject({
      success: true,
      remaining: 0n,
    });
  });
});
