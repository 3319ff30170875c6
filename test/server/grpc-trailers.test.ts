import http2 from "node:http2";
import { createServiceImplSpec } from "@connectrpc/connect";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LivenessService } from "../../gen/latchkey/v2/liveness_pb.js";
import { loadConfig } from "../../src/config.js";
import { Readiness } from "../../src/health/readiness.js";
import { connectionLimits } from "../../src/server/connection-limits.js";
import { type GrpcDoor, startGrpcDoor } from "../../src/server/grpc-door.js";
import { useServer } from "../harness/server.js";

/** What a server sent on one gRPC stream, in order. */
type Part =
  | { headers: Record<string, unknown>; endStream: boolean }
  | { data: number }
  | { trailers: Record<string, unknown> };

/** One unary gRPC call over a plain HTTP/2 client; `message` is the request's protobuf bytes. */
function exchange(port: number, path: string, message: Buffer, auth?: string): Promise<Part[]> {
  return new Promise((resolve, reject) => {
    const session = http2.connect(`http://127.0.0.1:${port}`);
    session.on("error", reject);
    const headers: http2.OutgoingHttpHeaders = {
      ":method": "POST",
      ":path": path,
      "content-type": "application/grpc",
      te: "trailers",
    };
    if (auth) headers.authorization = `Bearer ${auth}`;
    const stream = session.request(headers);
    const parts: Part[] = [];
    stream.on("response", (h, flags) =>
      parts.push({ headers: { ...h }, endStream: (flags & 1) === 1 }),
    );
    stream.on("data", (d: Buffer) => parts.push({ data: d.length }));
    stream.on("trailers", (t) => parts.push({ trailers: { ...t } }));
    stream.on("error", reject);
    stream.on("close", () => {
      session.close();
      resolve(parts);
    });
    const prefix = Buffer.alloc(5);
    prefix.writeUInt32BE(message.length, 1);
    stream.end(Buffer.concat([prefix, message]));
  });
}

type Headers = { headers: Record<string, unknown>; endStream: boolean };
type Trailers = { trailers: Record<string, unknown> };

describe("gRPC trailers on the gRPC port", () => {
  // A door serving one procedure that sets a header and a trailer, as an interceptor might.
  let door: GrpcDoor;
  beforeAll(async () => {
    const service = createServiceImplSpec<typeof LivenessService>(LivenessService, {
      check(_req, ctx) {
        ctx.responseHeader.set("x-header", "h");
        ctx.responseTrailer.set("x-trailer", "t");
        return {};
      },
    });
    door = await startGrpcDoor({
      services: [service],
      interceptors: [],
      maxBodyBytes: 1_000_000,
      log: pino({ level: "silent" }),
      port: 0,
      host: "127.0.0.1",
      limits: connectionLimits(loadConfig({})),
      counters: { refused: () => {}, open: () => {} },
      readiness: new Readiness([], { timeoutMs: 1_000, cacheMs: 1_000 }),
    });
  });
  afterAll(() => door.drain(1_000));

  it("sends what a procedure puts in its trailers after the message, never among the headers", async () => {
    const parts = await exchange(door.port, "/latchkey.v2.LivenessService/Check", Buffer.alloc(0));
    expect(parts.map((p) => Object.keys(p)[0])).toEqual(["headers", "data", "trailers"]);
    const [head, , tail] = parts as [Headers, unknown, Trailers];
    expect(head.headers["x-header"]).toBe("h");
    expect(head.headers).not.toHaveProperty("x-trailer");
    expect(head.headers).not.toHaveProperty("grpc-status");
    expect(tail.trailers).toMatchObject({ "grpc-status": "0", "x-trailer": "t" });
  });
});

describe("gRPC status framing of the server's procedures", () => {
  const s = useServer();
  const VERIFY = "/latchkey.v2.KeysService/VerifyKey";
  /** A VerifyKeyRequest with this key (field 1, a string). */
  const verifyRequest = (key: string) =>
    Buffer.concat([Buffer.from([0x0a, key.length]), Buffer.from(key, "latin1")]);

  it("answers a call with headers, the message, then the status in trailers", async () => {
    const k = await s.seed.key();
    for (const port of [s.app.grpcPort as number, Number(new URL(s.url).port)]) {
      const parts = await exchange(port, VERIFY, verifyRequest(k.key), s.rootKey);
      expect(parts.map((p) => Object.keys(p)[0])).toEqual(["headers", "data", "trailers"]);
      const [head, , tail] = parts as [Headers, unknown, Trailers];
      expect(head.endStream).toBe(false);
      expect(head.headers).not.toHaveProperty("grpc-status");
      expect(head.headers["x-request-id"]).toMatch(/^req_/);
      expect(tail.trailers["grpc-status"]).toBe("0");
    }
  });

  it("answers a refused call with its status and no message", async () => {
    for (const port of [s.app.grpcPort as number, Number(new URL(s.url).port)]) {
      const parts = await exchange(port, VERIFY, verifyRequest(""), s.rootKey);
      expect(parts.some((p) => "data" in p)).toBe(false);
      // Trailers-Only (one HEADERS frame ending the stream), or empty headers then trailers.
      const last = parts.at(-1) as Headers | Trailers;
      const status = "trailers" in last ? last.trailers : last.headers;
      if ("headers" in last) expect(last.endStream).toBe(true);
      expect(status["grpc-status"]).toBe("3");
      expect(status["x-request-id"]).toMatch(/^req_/);
    }
  });
});
