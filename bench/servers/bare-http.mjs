// The ceiling of the /v2 door: a bare node:http server that reads a JSON body and answers
// an envelope of the same size as apis.getApi, with no framework, auth or storage.
import http from "node:http";

let n = 0;
const server = http.createServer((req, res) => {
  const chunks = [];
  req.on("data", (c) => chunks.push(c));
  req.on("end", () => {
    const body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
    const text = JSON.stringify({
      meta: { requestId: `req_${(n++).toString(36).padStart(16, "0")}` },
      data: { id: body.apiId, name: "bench api" },
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
