// The gRPC side of the open-loop generator: node:http2, one stream per request, spread in turn
// over `grpc.connections` HTTP/2 connections (1 by default), all opened at the start, so the
// fixed-rate schedule can drive a gRPC port too. Latency is the generator's (from the
// scheduled send time). An answer is ok when its status is 200 and its trailers carry
// grpc-status 0.
import http2 from "node:http2";
import { emptyCounts, type LoadClient, type Target } from "./client.ts";

export function grpcClient(target: Target): LoadClient {
  if (!target.grpc) throw new Error("grpcClient needs target.grpc");
  const u = new URL(target.url);
  const body = Buffer.from(target.grpc.body, "base64");
  const headers = {
    ":method": "POST",
    ":path": u.pathname,
    "content-type": "application/grpc",
    te: "trailers",
    ...target.headers,
  };
  const codes: Record<string, number> = {};
  const counts = emptyCounts();
  const sessions = Array.from({ length: Math.max(1, target.grpc.connections ?? 1) }, () => {
    const session = http2.connect(`http://${u.host}`);
    session.on("error", () => {});
    return session;
  });
  let turn = 0;

  function send(_i: number, done: (ok: boolean) => void) {
    const session = sessions[turn++ % sessions.length] as http2.ClientHttp2Session;
    const stream = session.request(headers);
    let status = 0;
    let grpcStatus: string | undefined;
    let finished = false;
    const end = (ok: boolean) => {
      if (finished) return;
      finished = true;
      done(ok);
    };
    stream.on("response", (h) => {
      status = Number(h[":status"]);
      // A trailers-only answer carries its status in the headers.
      if (h["grpc-status"] !== undefined) grpcStatus = String(h["grpc-status"]);
    });
    stream.on("trailers", (t) => {
      grpcStatus = String(t["grpc-status"]);
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
      const code = grpcStatus ?? "?";
      codes[code] = (codes[code] ?? 0) + 1;
      if (grpcStatus !== "0") counts.unexpected++;
      counts.ok++;
      end(grpcStatus === "0");
    });
    stream.end(body);
  }

  return {
    send,
    destroy: () => {
      for (const session of sessions) session.destroy();
    },
    codes,
    counts,
  };
}
