import { createServiceImplSpec } from "@connectrpc/connect";
import * as grpc from "@grpc/grpc-js";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { KeysService } from "../../gen/latchkey/v2/keys_pb.js";
import { loadConfig } from "../../src/config.js";
import { Readiness } from "../../src/health/readiness.js";
import { connectionLimits } from "../../src/server/connection-limits.js";
import { type GrpcDoor, startGrpcDoor } from "../../src/server/grpc-door.js";
import { type HealthClient, healthClient } from "../harness/health.js";

// The bounds of grpc.health.v1 Watch streams, on a gRPC port with no database: the cap,
// names that are not served, and the end of every stream when the port drains.

describe("gRPC health watches", () => {
  let door: GrpcDoor;
  let client: HealthClient;
  let drained: Promise<void> | undefined;
  beforeAll(async () => {
    const readiness = new Readiness([], { timeoutMs: 1_000, cacheMs: 1_000 });
    await readiness.report();
    door = await startGrpcDoor({
      // No procedure implemented: only the service's name counts, as a name health knows.
      services: [createServiceImplSpec(KeysService, {})],
      interceptors: [],
      maxBodyBytes: 1_000_000,
      log: pino({ level: "silent" }),
      port: 0,
      host: "127.0.0.1",
      limits: connectionLimits(loadConfig({})),
      counters: { refused: () => {}, open: () => {} },
      readiness,
      maxHealthWatches: 2,
    });
    client = healthClient(door.port);
  });
  afterAll(async () => {
    client.close();
    await (drained ?? door.drain(1_000));
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

    drained = door.drain(5_000);
    expect(await served.ended).toBe(grpc.status.UNAVAILABLE);
    expect(await again.ended).toBe(grpc.status.UNAVAILABLE);
    const late = client.watch("");
    expect(await late.ended).toBe(grpc.status.UNAVAILABLE);
    expect(late.statuses).toEqual([]);
  });
});
