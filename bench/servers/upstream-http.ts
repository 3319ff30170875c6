// The API a gateway protects in the gateway benchmark: a node:http server that reads any
// request (any method and path, its body discarded) and answers a small JSON body, so that
// what the benchmark shows is the gateway's share. Prints {"port":N} once listening.
import http from "node:http";
import type { AddressInfo } from "node:net";

const BODY = '{"ok":true}';

const server = http.createServer((req, res) => {
  req.resume();
  req.on("end", () => {
    res.writeHead(200, { "content-type": "application/json", "content-length": BODY.length });
    res.end(BODY);
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, "127.0.0.1", () => {
  console.log(JSON.stringify({ port: (server.address() as AddressInfo).port }));
});
for (const signal of ["SIGTERM", "SIGINT"] as const) {
  process.once(signal, () => server.close(() => process.exit(0)));
}
