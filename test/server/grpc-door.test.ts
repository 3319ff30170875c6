import http2 from "node:http2";
import * as grpc from "@grpc/grpc-js";
import { describe, expect, it } from "vitest";
import { useServer } from "../harness/server.js";

const s = useServer();

/** Sends raw bytes as the request of a unary method on the gRPC port. */
function rawCall(path: string, bytes: Buffer, auth = true): Promise<grpc.ServiceError | null> {
  const client = new grpc.Client(`127.0.0.1:${s.app.grpcPort}`, grpc.credentials.createInsecure());
  const metadata = new grpc.Metadata();
  if (auth) metadata.set("authorization", `Bearer ${s.rootKey}`);
  return new Promise((resolve) => {
    client.makeUnaryRequest(
      path,
      (b: Buffer) => b,
      (b: Buffer) => b,
      bytes,
      metadata,
      (err) => {
        client.close();
        resolve(err);
      },
    );
  });
}

describe("the gRPC port", () => {
  it("answers bytes that are not a request message with INVALID_ARGUMENT, not INTERNAL", async () => {
    const err = await rawCall(
      "/latchkey.v2.ApisService/CreateApi",
      Buffer.from([0xff, 0xff, 0xff, 0xff]),
    );
    expect(err?.code).toBe(grpc.status.INVALID_ARGUMENT);
    // Worded as on the main port, and after the same checks (the root key first).
    expect(err?.details).toMatch(/^body: is not a valid protobuf message/);
  });

  it("checks the root key before it reads the message", async () => {
    const err = await rawCall(
      "/latchkey.v2.ApisService/CreateApi",
      Buffer.from([0xff, 0xff, 0xff, 0xff]),
      false,
    );
    expect(err?.code).toBe(grpc.status.UNAUTHENTICATED);
  });

  it("answers a method it does not serve UNIMPLEMENTED", async () => {
    const err = await rawCall("/latchkey.v2.ApisService/NoSuchMethod", Buffer.alloc(0));
    expect(err?.code).toBe(grpc.status.UNIMPLEMENTED);
  });

  it("still serves well-formed requests", async () => {
    const res = await s.call("grpc", "apis.createApi", { name: "grpc-door" });
    expect(res.status).toBe(200);
  });
});

/** One raw HTTP/2 request to the gRPC port: the response headers and trailers, merged. */
function h2Call(
  headers: Record<string, string>,
  body: Buffer,
): Promise<{ status: number; grpc: Record<string, string> }> {
  return new Promise((resolve, reject) => {
    const session = http2.connect(`http://127.0.0.1:${s.app.grpcPort}`);
    session.on("error", reject);
    const stream = session.request({ ":method": "POST", te: "trailers", ...headers });
    let status = 0;
    const grpcHeaders: Record<string, string> = {};
    const keep = (h: http2.IncomingHttpHeaders) => {
      for (const [name, value] of Object.entries(h)) {
        if (name.startsWith("grpc-")) grpcHeaders[name] = String(value);
      }
    };
    stream.on("response", (h) => {
      status = Number(h[":status"]);
      keep(h);
    });
    stream.on("trailers", keep);
    stream.on("data", () => {});
    stream.on("error", reject);
    stream.on("close", () => {
      session.close();
      resolve({ status, grpc: grpcHeaders });
    });
    stream.end(body);
  });
}

const frameOf = (bytes: Buffer, flag = 0) => {
  const head = Buffer.alloc(5);
  head[0] = flag;
  head.writeUInt32BE(bytes.length, 1);
  return Buffer.concat([head, bytes]);
};

describe("what the gRPC port refuses before any procedure", () => {
  const auth = () => ({ authorization: `Bearer ${s.rootKey}` });
  const VERIFY = "/latchkey.v2.KeysService/VerifyKey";

  it("answers HTTP/1.1 with 505, a request that is not gRPC with 415", async () => {
    const h1 = await fetch(`http://127.0.0.1:${s.app.grpcPort}/`);
    expect(h1.status).toBe(505);
    const json = await h2Call(
      { ":path": VERIFY, "content-type": "application/json" },
      Buffer.from("{}"),
    );
    expect(json.status).toBe(415);
  });

  it("answers an encoding it does not read UNIMPLEMENTED, naming those it reads", async () => {
    const r = await h2Call(
      { ":path": VERIFY, "content-type": "application/grpc", "grpc-encoding": "snappy", ...auth() },
      frameOf(Buffer.from([0x0a, 0x01, 0x61]), 1),
    );
    expect(r.grpc["grpc-status"]).toBe("12");
    expect(decodeURIComponent(r.grpc["grpc-message"] ?? "")).toContain("identity,gzip,deflate");
  });

  it("refuses a message over the body bound at its prefix, RESOURCE_EXHAUSTED", async () => {
    const head = Buffer.alloc(5);
    head.writeUInt32BE(0x7fff_ffff, 1);
    const r = await h2Call(
      { ":path": VERIFY, "content-type": "application/grpc", ...auth() },
      head,
    );
    expect(r.grpc["grpc-status"]).toBe("8");
  });

  it("wants exactly one whole request message in a unary call", async () => {
    const one = frameOf(Buffer.from([0x0a, 0x01, 0x61]));
    for (const body of [Buffer.alloc(0), Buffer.concat([one, one]), one.subarray(0, 6)]) {
      const r = await h2Call(
        { ":path": VERIFY, "content-type": "application/grpc", ...auth() },
        body,
      );
      expect(r.grpc["grpc-status"], `${body.length} bytes`).toBe("3");
    }
  });

  it("ends a call whose grpc-timeout passes before its answer DEADLINE_EXCEEDED", async () => {
    // The request never ends, so the procedure never runs; the deadline answers it.
    const r = await new Promise<Record<string, string>>((resolve, reject) => {
      const session = http2.connect(`http://127.0.0.1:${s.app.grpcPort}`);
      const stream = session.request({
        ":method": "POST",
        ":path": VERIFY,
        "content-type": "application/grpc",
        "grpc-timeout": "50m",
        ...auth(),
      });
      const out: Record<string, string> = {};
      stream.on("trailers", (t) => {
        Object.assign(out, t);
        // The caller's side is still open: the status is what was waited for.
        stream.close();
      });
      stream.on("response", (h) => Object.assign(out, h));
      stream.on("data", () => {});
      stream.on("error", reject);
      stream.on("close", () => {
        session.destroy();
        resolve(out);
      });
      stream.write(Buffer.from([0]));
    });
    expect(r["grpc-status"]).toBe("4");
  });
});
