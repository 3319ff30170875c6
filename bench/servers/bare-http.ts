// The ceiling of the /v2 door: a bare node:http server that reads a JSON body and answers an
// envelope of the same shape and size as Latchkey's, with no framework, auth, hashing, cache,
// limiter or storage. BARE_SHAPE: `get-api` (apis.getApi) or `verify` (a VALID verification
// with one rate limit). Prints {"port":N,"eventLoopPort":M} once listening: M answers the
// event-loop delay since its last read (bench/lib/eventloop.ts), like Latchkey's /metrics.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { serveEventLoopDelay } from "../lib/eventloop.ts";

const shape = process.env.BARE_SHAPE ?? "get-api";
let n = 0;
const requestId = () => `req_${(n++).toString(36).padStart(16, "0")}`;

function answer(body: { apiId?: string; key?: string }): unknown {
  if (shape === "get-api") {
    return { meta: { requestId: requestId() }, data: { id: body.apiId, name: "bench api" } };
  }
  const now = Date.now();
  return {
    meta: { requestId: requestId() },
    data: {
      valid: true,
      code: "VALID",
      keyId: `key_${(body.key ?? "").slice(0, 16).padStart(16, "0")}`,
      enabled: true,
      ratelimits: [
        {
          id: "rl_0000000000000000",
          name: "requests",
          limit: 1_000_000_000,
          duration: 60_000,
          remaining: 1_000_000_000 - (n % 1_000_000_000),
          reset: now - (now % 60_000) + 60_000,
          exceeded: false,
          autoApply: true,
        },
      ],
    },
  };
}

const server = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on("data", (c: Buffer) => chunks.push(c));
  req.on("end", () => {
    const text = JSON.stringify(answer(JSON.parse(Buffer.concat(chunks).toString("utf8"))));
    res.writeHead(200, {
      "content-type": "application/json",
      "content-length": Buffer.byteLength(text),
    });
    res.end(text);
  });
});
server.keepAliveTimeout = 65_000;
const eventLoopPort = await serveEventLoopDelay();
server.listen(Number(process.env.PORT ?? 0), "127.0.0.1", () => {
  console.log(JSON.stringify({ port: (server.address() as AddressInfo).port, eventLoopPort }));
});
process.on("SIGTERM", () => server.close(() => process.exit(0)));
