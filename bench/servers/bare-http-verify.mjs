// The ceiling of the /v2 door for keys.verifyKey: a bare node:http server that reads a JSON
// body and answers an envelope of the same shape and size as a VALID verification with one
// rate limit, with no framework, hashing, cache, limiter or storage.
import http from "node:http";

let n = 0;
const server = http.createServer((req, res) => {
  const chunks = [];
  req.on("data", (c) => chunks.push(c));
  req.on("end", () => {
    const body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
    const now = Date.now();
    const text = JSON.stringify({
      meta: { requestId: `req_${(n++).toString(36).padStart(16, "0")}` },
      data: {
        valid: true,
        code: "VALID",
        keyId: `key_${body.key.slice(0, 16).padStart(16, "0")}`,
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
    });
    res.writeHead(200, {
      "content-type": "application/json",
      "content-length": Buffer.byteLength(text),
    });
    res.end(text);
  });
});
server.keepAliveTimeout = 65_000;
server.listen(Number(process.env.PORT ?? 0), "127.0.0.1", () => {
  console.log(JSON.stringify({ port: server.address().port }));
});
process.on("SIGTERM", () => server.close(() => process.exit(0)));
