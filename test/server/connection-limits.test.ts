import net from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  connectRaw,
  FLAG,
  FRAME,
  frame,
  headerBlock,
  PREFACE,
  type RawH2,
  requestHeaders,
} from "../harness/h2-frames.js";
import { startServer, type TestServer } from "../harness/server.js";

// Every door bounds its connections: idle, headers and request deadlines, a cap per port,
// and a stream cap per HTTP/2 session. The sockets are opened in this process, next to the
// server's (ulimit -n is 20,000 here), and all closed by the end of the file.

const VERIFY_PATH = "/latchkey.v2.KeysService/VerifyKey";
const opened: net.Socket[] = [];

afterAll(() => {
  for (const socket of opened) socket.destroy();
});

/** Polls `done` until it holds or `ms` pass; returns whether it held. */
async function until(done: () => boolean, ms = 15_000): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (!done()) {
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, 50));
  }
  return true;
}

/** Polls the gauge of open connections of a port until `done` holds or 10 s pass. */
async function openConnections(
  s: TestServer,
  listener: string,
  done: (open: number) => boolean,
): Promise<number> {
  const deadline = Date.now() + 10_000;
  let open = -1;
  while (Date.now() < deadline) {
    const m = await s.app.metrics.connectionsOpen.get();
    open = m.values.find((v) => v.labels.listener === listener)?.value ?? 0;
    if (done(open)) break;
    await new Promise((r) => setTimeout(r, 10));
  }
  return open;
}

/** A connected socket that reads (and drops) whatever it gets, and records whether it closed. */
async function connect(port: number): Promise<{ socket: net.Socket; closed: () => boolean }> {
  const socket = net.connect(port, "127.0.0.1");
  opened.push(socket);
  let closed = false;
  socket.on("error", () => {});
  socket.once("close", () => {
    closed = true;
  });
  await new Promise<void>((resolve) => {
    socket.once("connect", () => resolve());
    socket.once("close", () => resolve());
  });
  socket.resume();
  return { socket, closed: () => closed };
}

/**
 * `n` idle sockets. Each batch waits until the server has accepted it: the client and the
 * server share this event loop, and connects that outrun the accepts overflow the listen
 * queue, which costs a SYN retransmit (a second) per overflow.
 */
async function idleSockets(s: TestServer, listener: string, port: number, n: number) {
  const all: Awaited<ReturnType<typeof connect>>[] = [];
  while (all.length < n) {
    const batch = Math.min(250, n - all.length);
    all.push(...(await Promise.all(Array.from({ length: batch }, () => connect(port)))));
    await openConnections(s, listener, (open) => open >= all.filter((c) => !c.closed()).length);
  }
  return all;
}

/** The first lines the server wrote on a socket, once it closed. */
async function rawHttp(port: number, text: string) {
  const { socket, closed } = await connect(port);
  let received = "";
  socket.on("data", (c: Buffer) => {
    received += c.toString("latin1");
  });
  socket.write(text);
  return { closed, received: () => received, socket };
}

describe("deadlines", () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startServer({
      config: {
        connectionIdleTimeoutMs: 2_000,
        requestHeadersTimeoutMs: 1_000,
        requestTimeoutMs: 2_000,
      },
    });
  });
  afterAll(() => s?.stop());

  it("closes 3,000 idle sockets on each port after the idle timeout, and answers meanwhile", async () => {
    const { key } = await s.seed.key();
    const [main, grpc] = await Promise.all([
      idleSockets(s, "main", s.app.port, 3_000),
      idleSockets(s, "grpc", s.app.grpcPort as number, 3_000),
    ]);
    // While they are all held, verification still answers on every door.
    for (const door of ["json", "connect", "grpc"] as const) {
      const res = await s.call(door, "keys.verifyKey", { key });
      expect(res.status).toBe(200);
      expect(res.data.valid).toBe(true);
    }
    const all = [...main, ...grpc];
    expect(await until(() => all.every((c) => c.closed()))).toBe(true);
  });

  // Each of the rest waits for a deadline on a socket of its own, so they wait together (their
  // assertions are plain matchers, which the global expect reports in the right test).
  it.concurrent("closes an HTTP/1.1 request whose headers never end (slowloris), with 408", async () => {
    const c = await rawHttp(
      s.app.port,
      "POST /v2/keys.verifyKey HTTP/1.1\r\nHost: x\r\nX-A: 1\r\n",
    );
    expect(await until(c.closed)).toBe(true);
    expect(c.received()).toMatch(/^HTTP\/1\.1 408/);
  });

  it.concurrent("closes an HTTP/1.1 request whose body never arrives whole, with 408", async () => {
    const c = await rawHttp(
      s.app.port,
      "POST /v2/keys.verifyKey HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{",
    );
    expect(await until(c.closed)).toBe(true);
    expect(c.received()).toMatch(/^HTTP\/1\.1 408/);
  });

  it.concurrent("closes a socket that stops inside the sniffer, part of the way through the HTTP/2 preface", async () => {
    const c = await rawHttp(s.app.port, "PRI * HTTP/2.0\r\n");
    expect(await until(c.closed)).toBe(true);
  });

  it.concurrent("closes an HTTP/1.1 keep-alive connection idle after its response", async () => {
    const c = await rawHttp(s.app.port, "GET /v2/liveness HTTP/1.1\r\nHost: x\r\n\r\n");
    expect(await until(c.closed)).toBe(true);
    expect(c.received()).toMatch(/^HTTP\/1\.1 200/);
  });

  for (const port of ["main", "grpc"] as const) {
    const portOf = () => (port === "main" ? s.app.port : (s.app.grpcPort as number));

    it.concurrent(`closes an HTTP/2 session on the ${port} port idle after its stream`, async () => {
      const h2 = await connectRaw(portOf());
      opened.push(h2.socket);
      const contentType = port === "main" ? "application/proto" : "application/grpc";
      const block = headerBlock(requestHeaders(VERIFY_PATH, contentType));
      h2.socket.write(
        Buffer.concat([
          PREFACE,
          frame(FRAME.settings, 0, 0),
          frame(FRAME.headers, FLAG.endHeaders | FLAG.endStream, 1, block),
        ]),
      );
      expect(await until(() => h2.closed)).toBe(true);
      expect(h2.frames.some((f) => f.streamId === 1 && f.type === FRAME.headers)).toBe(true);
    });

    it.concurrent(`closes an HTTP/2 session on the ${port} port whose first HEADERS never ends`, async () => {
      const h2 = await connectRaw(portOf());
      opened.push(h2.socket);
      const block = headerBlock(requestHeaders(VERIFY_PATH, "application/grpc"));
      // HEADERS without END_HEADERS: the header block waits for a CONTINUATION never sent.
      h2.socket.write(
        Buffer.concat([PREFACE, frame(FRAME.settings, 0, 0), frame(FRAME.headers, 0, 1, block)]),
      );
      expect(await until(() => h2.closed)).toBe(true);
    });

    it.concurrent(`ends an HTTP/2 stream on the ${port} port whose body never arrives`, async () => {
      const h2 = await connectRaw(portOf());
      opened.push(h2.socket);
      const contentType = port === "main" ? "application/proto" : "application/grpc";
      const block = headerBlock(requestHeaders(VERIFY_PATH, contentType));
      h2.socket.write(
        Buffer.concat([
          PREFACE,
          frame(FRAME.settings, 0, 0),
          frame(FRAME.headers, FLAG.endHeaders, 1, block),
        ]),
      );
      // The server resets the stream or ends its side (gRPC: DEADLINE_EXCEEDED trailers),
      // on a connection it keeps: its first HEADERS met the headers deadline.
      const ended = (f: RawH2["frames"][number]) =>
        f.streamId === 1 &&
        (f.type === FRAME.rstStream || (f.type === FRAME.headers && f.flags & FLAG.endStream));
      expect(await until(() => h2.frames.some(ended) || h2.closed)).toBe(true);
      expect(h2.frames.some(ended)).toBe(true);
      h2.socket.destroy();
    });
  }
});

describe("caps", () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startServer({ config: { maxConnections: 50, h2MaxConcurrentStreams: 100 } });
  });
  afterAll(() => s?.stop());

  for (const port of ["main", "grpc"] as const) {
    const portOf = () => (port === "main" ? s.app.port : (s.app.grpcPort as number));
    const contentType = port === "main" ? "application/proto" : "application/grpc";

    it(`accepts at most H2_MAX_CONCURRENT_STREAMS of 1,000 stalled streams on one ${port} session`, async () => {
      const h2 = await connectRaw(portOf());
      opened.push(h2.socket);
      const block = headerBlock(requestHeaders(VERIFY_PATH, contentType));
      const streams = Array.from({ length: 1_000 }, (_, i) =>
        frame(FRAME.headers, FLAG.endHeaders, 2 * i + 1, block),
      );
      h2.socket.write(Buffer.concat([PREFACE, frame(FRAME.settings, 0, 0), ...streams]));
      let peak = 0;
      const settled = await until(() => {
        if (port === "main") peak = Math.max(peak, s.app.inflight());
        return h2.closed || h2.refused() >= 900 || h2.goawayLastStreamId() !== undefined;
      }, 5_000);
      // Streams the server took: those before its GOAWAY (or all), less those it refused.
      const last = h2.goawayLastStreamId() ?? 2 * 1_000 - 1;
      const taken = (last + 1) / 2 - h2.refused();
      expect(settled).toBe(true);
      expect(taken).toBeLessThanOrEqual(100);
      if (port === "main") expect(peak).toBeLessThanOrEqual(100);
      h2.socket.destroy();
      expect(await until(() => s.app.inflight() === 0)).toBe(true);
    });

    it(`closes the 51st connection to the ${port} port at once; the first 50 keep working`, async () => {
      await openConnections(s, port, (n) => n === 0);
      const held = await Promise.all(Array.from({ length: 50 }, () => connectRaw(portOf())));
      for (const h of held) opened.push(h.socket);
      // The server has taken all 50 before the 51st knocks.
      await openConnections(s, port, (n) => n === 50);
      const extra = await connect(portOf());
      expect(await until(extra.closed)).toBe(true);
      // Each held connection still serves a request: an HTTP/2 call that the server ends.
      const block = headerBlock(requestHeaders(VERIFY_PATH, contentType));
      for (const h of held) {
        h.socket.write(
          Buffer.concat([
            PREFACE,
            frame(FRAME.settings, 0, 0),
            frame(FRAME.headers, FLAG.endHeaders | FLAG.endStream, 1, block),
          ]),
        );
      }
      const answered = (h: RawH2) =>
        h.frames.some((f) => f.streamId === 1 && f.type === FRAME.headers);
      expect(await until(() => held.every(answered))).toBe(true);
      const refused = await s.app.metrics.connectionsRefused.get();
      expect(refused.values.find((v) => v.labels.listener === port)?.value).toBeGreaterThan(0);
      for (const h of held) h.socket.destroy();
    });
  }
});
