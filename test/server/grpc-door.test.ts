import * as grpc from "@grpc/grpc-js";
import { describe, expect, it } from "vitest";
import { useServer } from "../harness/server.js";

const s = useServer();

/** Sends raw bytes as the request of a unary method on the grpc-js door. */
function rawCall(path: string, bytes: Buffer): Promise<grpc.ServiceError | null> {
  const client = new grpc.Client(`127.0.0.1:${s.app.grpcPort}`, grpc.credentials.createInsecure());
  const metadata = new grpc.Metadata();
  metadata.set("authorization", `Bearer ${s.rootKey}`);
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

describe("the grpc-js door", () => {
  it("answers bytes that are not a request message with INVALID_ARGUMENT, not INTERNAL", async () => {
    const err = await rawCall(
      "/latchkey.v2.ApisService/CreateApi",
      Buffer.from([0xff, 0xff, 0xff, 0xff]),
    );
    expect(err?.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(err?.details).toContain("could not be read");
  });

  it("still serves well-formed requests", async () => {
    const res = await s.call("grpc", "apis.createApi", { name: "grpc-door" });
    expect(res.status).toBe(200);
  });
});
