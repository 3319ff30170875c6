import { describe, expect, it } from "vitest";
import { useServer } from "../../harness/server.js";

// ratelimit.limit and ratelimit.multiLimit answer with the RateLimit-Policy and RateLimit
// header fields of the IETF HTTPAPI draft (domain/ratelimit-headers.ts): one item per limit,
// named after its namespace, with the limit and window that applied (an override's when one
// matched). On the /v2 door they are HTTP headers; on gRPC, response metadata.

const s = useServer();
let n = 0;
const HOUR = 3_600_000;

/** A /v2 call of a ratelimit procedure with the server's root key: status, headers, data. */
async function post(procedure: string, body: unknown) {
  return s.raw(`/v2/ratelimit.${procedure}`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${s.rootKey}` },
    body: JSON.stringify(body),
  });
}

describe("rate-limit header fields", () => {
  it("ratelimit.limit over /v2: the policy, and what is left until the window ends", async () => {
    s.clock.set(Date.parse("2026-10-01T10:59:20Z"));
    const namespace = `headers.${++n}`;
    const body = { namespace, identifier: "u1", limit: 2, duration: HOUR };
    const first = await post("limit", body);
    expect(first.status).toBe(200);
    expect(first.headers.get("ratelimit-policy")).toBe(`"${namespace}";q=2;w=3600`);
    expect(first.headers.get("ratelimit")).toBe(`"${namespace}";r=1;t=40`);
    await post("limit", body);
    const refused = await post("limit", body);
    expect(refused.body.data.success).toBe(false);
    expect(refused.headers.get("ratelimit")).toBe(`"${namespace}";r=0;t=40`);
    // A refused decision is a 200 with its body: Retry-After belongs to 429 answers only.
    expect(refused.headers.get("retry-after")).toBeNull();
  });

  it("reports the limit and window of the override that applied", async () => {
    s.clock.set(Date.parse("2026-10-01T10:00:00Z"));
    const namespace = `headers.override.${++n}`;
    await post("limit", { namespace, identifier: "other", limit: 5, duration: HOUR });
    await post("setOverride", { namespace, identifier: "vip", limit: 50, duration: 60_000 });
    const res = await post("limit", { namespace, identifier: "vip", limit: 5, duration: HOUR });
    expect(res.headers.get("ratelimit-policy")).toBe(`"${namespace}";q=50;w=60`);
    expect(res.headers.get("ratelimit")).toBe(`"${namespace}";r=49;t=60`);
  });

  it("ratelimit.multiLimit lists every limit, in request order", async () => {
    s.clock.set(Date.parse("2026-10-01T10:00:00Z"));
    const a = `headers.multi.a.${++n}`;
    const b = `headers.multi.b.${n}`;
    const res = await post("multiLimit", [
      { namespace: a, identifier: "u", limit: 10, duration: 1000, cost: 3 },
      { namespace: b, identifier: "u", limit: 100, duration: 86_400_000 },
    ]);
    expect(res.status).toBe(200);
    expect(res.headers.get("ratelimit-policy")).toBe(`"${a}";q=10;w=1, "${b}";q=100;w=86400`);
    expect(res.headers.get("ratelimit")).toBe(`"${a}";r=7;t=1, "${b}";r=99;t=50400`);
  });

  it("comes as response metadata on the gRPC door", async () => {
    const namespace = `headers.grpc.${++n}`;
    let policy: string | null = null;
    await s.api.ratelimit.limit(
      { namespace, identifier: "g", limit: 3n, duration: BigInt(HOUR) },
      { onHeader: (h) => (policy = h.get("ratelimit-policy")) },
    );
    expect(policy).toBe(`"${namespace}";q=3;w=3600`);
  });
});
