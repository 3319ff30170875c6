import net from "node:net";
import { describe, expect, it } from "vitest";
import { askReady, healthClient } from "../harness/health.js";
import { startServer } from "../harness/server.js";

describe("graceful shutdown", () => {
  it("turns readiness off first, finishes an in-flight request, closes its connection, and refuses new ones", async () => {
    const s = await startServer();
    const health = healthClient(s.app.grpcPort as number);
    const watch = health.watch("");
    await watch.until("SERVING");
    const body = JSON.stringify({ name: "in flight" });
    const socket = net.connect(s.app.port, "127.0.0.1");
    await new Promise<void>((r) => socket.once("connect", () => r()));
    let response = "";
    socket.on("data", (c) => {
      response += c.toString();
    });
    const closed = new Promise<void>((r) => socket.once("close", () => r()));
    // Headers and half the body: the request is in flight when the stop begins.
    socket.write(
      `POST /v2/apis.createApi HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nAuthorization: Bearer ${s.rootKey}\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 5)}`,
    );
    // Wait (bounded) until the server has the request: its handler runs on the headers.
    const deadline = Date.now() + 10_000;
    while (s.app.inflight() === 0 && Date.now() < deadline)
      await new Promise((r) => setImmediate(r));
    expect(s.app.inflight()).toBe(1);
    const stopping = s.stop();
    // The request is still in flight: readiness is already off, on HTTP and on gRPC.
    expect(await askReady(s.adminUrl)).toEqual({
      status: 503,
      body: { status: "not ready", failing: ["shutdown"] },
    });
    await watch.until("NOT_SERVING");
    expect(s.app.inflight()).toBe(1);
    const refused = await new Promise<boolean>((resolve) => {
      const other = net.connect(s.app.port, "127.0.0.1");
      other.once("error", () => resolve(true));
      other.once("connect", () => {
        other.destroy();
        resolve(false);
      });
    });
    socket.write(body.slice(5));
    await closed;
    await stopping;
    expect(refused).toBe(true);
    expect(response).toMatch(/^HTTP\/1.1 200 OK/);
    expect(response.toLowerCase()).toContain("connection: close");
    expect(response).toContain('"apiId":"api_');
    expect(watch.statuses).toEqual(["SERVING", "NOT_SERVING"]);
    expect(await watch.ended).toBe(14); // UNAVAILABLE: the drain ended the watch
    health.close();
  });
});
