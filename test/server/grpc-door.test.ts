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
