import { createServer, type IncomingHttpHeaders, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { documentedSite, NGINX, type Nginx, startNginx } from "../../../bench/lib/nginx.ts";
import { compileCidrs } from "../../../src/domain/networks.js";
import { useServer } from "../../harness/server.js";

// A real nginx with auth_request in front of a small upstream, running the documented
// configuration (docs/gateways/nginx.conf), with Latchkey deciding every request. Skipped
// when nginx is not installed (CI installs Debian's package; .ci/run).
//
// The test's client connects to nginx from 127.0.0.5; nginx connects to Latchkey from
// 127.0.0.1, the one proxy TRUSTED_PROXIES names. So Latchkey believes what nginx appends to
// X-Forwarded-For and nothing the client wrote there.

if (!NGINX)
  console.log("[latchkey] nginx is not installed: the nginx auth_request test is skipped");

const s = useServer({ config: { trustedProxies: compileCidrs(["127.0.0.1"]) } });
const CLIENT_ADDRESS = "127.0.0.5";

/** What the upstream received: the request's headers, by lowercase name. */
let seen: IncomingHttpHeaders[] = [];
let upstream: Server;
let nginx: Nginx;
let apiId: string;

/** A request to nginx from the client's address: status, headers and body. */
function viaNginx(
  headers: Record<string, string>,
  opts: { path?: string; method?: string; to?: Nginx } = {},
) {
  const { path = "/orders/7?x=1", method = "GET", to = nginx } = opts;
  return new Promise<{ status: number; headers: IncomingHttpHeaders; body: string }>(
    (resolve, reject) => {
      const req = request(
        {
          host: "127.0.0.1",
          port: to.port,
          path,
          method,
          headers,
          localAddress: CLIENT_ADDRESS,
        },
        (res) => {
          let body = "";
          res.setEncoding("utf8");
          res.on("data", (c: string) => {
            body += c;
          });
          res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
        },
      );
      req.once("error", reject);
      req.end();
    },
  );
}

describe.skipIf(!NGINX)("nginx auth_request in front of an upstream", () => {
  beforeAll(async () => {
    upstream = createServer((req, res) => {
      seen.push(req.headers);
      res.writeHead(200, { "content-type": "text/plain" });
      res.end(`upstream saw ${req.method} ${req.url}`);
    });
    await new Promise<void>((r) => upstream.listen(0, "127.0.0.1", r));
    apiId = await s.seed.api();
    const settings = {
      latchkey: `127.0.0.1:${s.app.port}`,
      upstream: `127.0.0.1:${(upstream.address() as AddressInfo).port}`,
      apiId,
      rootKey: await s.seed.rootKey([`api.${apiId}.verify_key`]),
    };
    nginx = await startNginx((listen) => documentedSite(settings, listen));
  });
  afterAll(async () => {
    await nginx?.stop();
    await new Promise((r) => upstream?.close(r));
  });

  it("passes a valid key's request upstream with the key's id, identity and metadata, not the key", async () => {
    seen = [];
    const k = await s.seed.key({
      apiId,
      externalId: "nginx_user",
      meta: { plan: "pro" },
      ratelimits: [{ name: "requests", limit: 100, duration: 60_000, autoApply: true }],
    });
    const res = await viaNginx({ authorization: `Bearer ${k.key}` });
    expect(res.status, nginx.errors()).toBe(200);
    expect(res.body).toBe("upstream saw GET /orders/7?x=1");
    expect(res.headers["ratelimit-policy"]).toBe('"requests";q=100;w=60');
    expect(res.headers.ratelimit).toMatch(/^"requests";r=99;t=\d+$/);
    expect(seen).toHaveLength(1);
    const got = seen[0] as IncomingHttpHeaders;
    expect(got["x-latchkey-key-id"]).toBe(k.keyId);
    expect(got["x-latchkey-identity"]).toBe("nginx_user");
    expect(
      JSON.parse(Buffer.from(got["x-latchkey-meta"] as string, "base64url").toString()),
    ).toEqual({ plan: "pro" });
    expect(got.authorization).toBeUndefined();
  });

  it("keeps a client's own x-latchkey-* headers from the upstream", async () => {
    seen = [];
    const k = await s.seed.key({ apiId });
    const res = await viaNginx({
      "x-api-key": k.key,
      "x-latchkey-identity": "someone_else",
      "x-latchkey-key-id": "key_forged",
    });
    expect(res.status).toBe(200);
    expect(seen[0]?.["x-latchkey-key-id"]).toBe(k.keyId);
    expect(seen[0]?.["x-latchkey-identity"]).toBeUndefined();
    expect(seen[0]?.["x-api-key"]).toBeUndefined();
  });

  it("answers 401 with WWW-Authenticate and the outcome without a key or with an unknown one", async () => {
    seen = [];
    const none = await viaNginx({});
    expect(none.status).toBe(401);
    expect(none.headers["www-authenticate"]).toBe('Bearer realm="latchkey"');
    expect(JSON.parse(none.body)).toEqual({ error: { status: 401, code: "KEY_MISSING" } });
    const unknown = await viaNginx({ authorization: "Bearer lk_not_a_key" });
    expect([unknown.status, unknown.headers["x-latchkey-code"]]).toEqual([401, "NOT_FOUND"]);
    expect(seen).toHaveLength(0);
  });

  it("passes the client's address, as nginx saw it, to the key's network rule", async () => {
    const near = await s.seed.key({ apiId, allowedCidrs: [`${CLIENT_ADDRESS}/32`] });
    expect((await viaNginx({ "x-api-key": near.key })).status).toBe(200);
    const far = await s.seed.key({ apiId, allowedCidrs: ["203.0.113.0/24"] });
    // What the client writes in X-Forwarded-For is not believed: nginx appends 127.0.0.5.
    const res = await viaNginx({ "x-api-key": far.key, "x-forwarded-for": "203.0.113.9" });
    expect([res.status, res.headers["x-latchkey-code"]]).toEqual([403, "FORBIDDEN"]);
    expect(JSON.parse(res.body).error.code).toBe("FORBIDDEN");
  });

  it("turns a rate-limited key into a 429 with Retry-After and the RateLimit fields", async () => {
    const k = await s.seed.key({
      apiId,
      ratelimits: [{ name: "requests", limit: 1, duration: 60_000, autoApply: true }],
    });
    expect((await viaNginx({ "x-api-key": k.key })).status).toBe(200);
    const res = await viaNginx({ "x-api-key": k.key });
    expect(res.status, nginx.errors()).toBe(429);
    expect(Number(res.headers["retry-after"])).toBeGreaterThan(0);
    expect(res.headers.ratelimit).toMatch(/^"requests";r=0;t=\d+$/);
    expect(JSON.parse(res.body)).toEqual({ error: { status: 429, code: "RATE_LIMITED" } });
  });

  it("spends the gateway's cost, whatever policy headers the client sends", async () => {
    const k = await s.seed.key({ apiId, credits: { remaining: 3 } });
    const other = await s.seed.api();
    const res = await viaNginx({
      "x-api-key": k.key,
      "x-latchkey-cost": "0",
      "x-latchkey-api-id": other,
      "x-latchkey-root-key": "forged",
    });
    expect(res.status).toBe(200);
    expect((await s.api.keys.getKey({ keyId: k.keyId })).data?.credits?.remaining).toBe(2n);
  });

  it("tags the verification with the original method and path", async () => {
    const k = await s.seed.key({ apiId });
    await viaNginx({ "x-api-key": k.key }, { path: "/invoices/42?secret=1", method: "DELETE" });
    await s.app.deps.events.flush();
    const rows = await s.db.query<{ tags: string[] }>(
      "select tags from key_verifications where key_id = $1",
      [k.keyId],
    );
    expect(rows.map((r) => [...r.tags].sort())).toEqual([["method=DELETE", "path=/invoices/42"]]);
  });
});

describe.skipIf(!NGINX)("nginx with a gateway root key that may not verify the API", () => {
  let wrong: Nginx;
  let stray: Server;
  beforeAll(async () => {
    stray = createServer((_, res) => res.end("never reached"));
    await new Promise<void>((r) => stray.listen(0, "127.0.0.1", r));
    const api = await s.seed.api();
    const settings = {
      latchkey: `127.0.0.1:${s.app.port}`,
      upstream: `127.0.0.1:${(stray.address() as AddressInfo).port}`,
      apiId: api,
      rootKey: await s.seed.rootKey([`api.${api}.read_key`]),
    };
    wrong = await startNginx((listen) => documentedSite(settings, listen));
  });
  afterAll(async () => {
    await wrong?.stop();
    await new Promise((r) => stray?.close(r));
  });

  it("answers 502: the gateway's configuration needs attention, not the client", async () => {
    const res = await viaNginx({ "x-api-key": "lk_whatever" }, { to: wrong });
    expect(res.status).toBe(502);
    expect(JSON.parse(res.body)).toEqual({
      error: { status: 502, code: "authorization_unavailable" },
    });
  });
});
