// The gRPC side of bench/open-loop.mjs: the same `send(i, done)` client over one HTTP/2
// connection (node:http2, one stream per request), so the open-loop schedule of runOpen can
// drive the gRPC port too. `config.grpc.body` is one length-prefixed protobuf message (base64);
// an answer counts as ok when its status is 200 and its trailers carry grpc-status 0.
import http2 from "node:http2";

/** A client for runOpen: `send(i, done)`, `destroy()`, `codes` (by grpc-status), `counts`. */
export function grpcClient(config) {
  const u = new URL(config.url);
  const body = Buffer.from(config.grpc.body, "base64");
  const headers = {
    ":method": "POST",
    ":path": u.pathname,
    "content-type": "application/grpc",
    te: "trailers",
    ...(config.headers ?? {}),
  };
  const codes = {};
  const counts = { ok: 0, non2xx: 0, errors: 0, unexpected: 0 };
  const session = http2.connect(`http://${u.host}`);
  session.on("error", () => {});

  function send(_i, done) {
    const stream = session.request(headers);
    let status = 0;
    let grpcStatus = null;
    let finished = false;
    const end = (ok) => {
      if (finished) return;
      finished = true;
      done(ok);
    };
    stream.on("response", (h) => {
      status = h[":status"];
      if (h["grpc-status"] !== undefined) grpcStatus = h["grpc-status"]; // trailers-only answer
    });
    stream.on("trailers", (t) => {
      grpcStatus = t["grpc-status"];
    });
    stream.on("data", () => {});
    stream.on("error", () => {
      counts.errors++;
      end(false);
    });
    stream.on("close", () => {
      if (status !== 200) {
        counts.non2xx++;
        return end(false);
      }
      codes[grpcStatus ?? "?"] = (codes[grpcStatus ?? "?"] ?? 0) + 1;
      if (grpcStatus !== "0") counts.unexpected++;
      counts.ok++;
      end(grpcStatus === "0");
    });
    stream.end(body);
  }

  function destroy() {
    session.destroy();
  }
  return { send, destroy, codes, counts };
}
