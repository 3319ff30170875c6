import * as grpc from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Readiness } from "../../src/health/readiness.js";
import { addHealthService, type GrpcHealth } from "../../src/server/grpc-health.js";
import { type HealthClient, healthClient } from "../harness/health.js";

// The bounds of grpc.health.v1 Watch streams, on a bare grpc-js server (no database): the cap,
// names that are not served, and the end of every stream when the port drains.

describe("gRPC health watches", () => {
  const server = new grpc.Server();
  let health: GrpcHealth;
  let client: HealthClient;
  beforeAll(async () => {
    const readiness = new Readiness([], { timeoutMs: 1_000, cacheMs: 1_000 });
    await readiness.report();
    health = addHealthService(server, readiness, ["latchkey.v2.KeysService"], 2);
    const port = await new Promise<number>((resolve, reject) =>
      server.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (err, p) =>
        err ? reject(err) : resolve(p),
      ),
    );
    client = healthClient(port);
  });
  afterAll(() => {
    client.close();
    server.forceShutdown();
  });

  it("answers SERVICE_UNKNOWN to a name not served, caps the streams, and ends them all at close", async () => {
    const served = client.watch("latchkey.v2.KeysService");
    const unknown = client.watch("no.such.Service");
    await served.until("SERVING");
    await unknown.until("SERVICE_UNKNOWN");
    // Both count: the third is refused while they are open.
    const third = client.watch("");
    expect(await third.ended).toBe(grpc.status.RESOURCE_EXHAUSTED);
    expect(third.statuses).toEqual([]);
    unknown.cancel();
    expect(await unknown.ended).toBe(grpc.status.CANCELLED);
    // The cancelled stream's place is free once the server has seen the cancellation.
    const deadline = Date.now() + 10_000;
    let again = client.watch("");
    const servesSoon = (w: typeof again) =>
      w.until("SERVING").then(
        () => true,
        () => false,
      );
    while (!(await servesSoon(again)) && Date.now() < deadline) again = client.watch("");
    expect(again.statuses).toEqual(["SERVING"]);

    health.close();
    expect(await served.ended).toBe(grpc.status.UNAVAILABLE);
    expect(await again.ended).toBe(grpc.status.UNAVAILABLE);
    const late = client.watch("");
    expect(await late.ended).toBe(grpc.status.UNAVAILABLE);
    expect(late.statuses).toEqual([]);
  });
});
