import { createServer, type IncomingHttpHeaders, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** One request a receiver got. */
export interface Received {
  headers: IncomingHttpHeaders;
  body: string;
}

/**
 * How a receiver answers the n-th request (0-based): a status, hang (never answer), or
 * undefined when the behaviour answered through `res` itself.
 */
export type Behaviour = (n: number, res: ServerResponse) => number | "hang" | undefined;

/** A real HTTP receiver on 127.0.0.1, port 0, in the test's process. */
export interface Receiver {
  url: string;
  received: Received[];
  /** Replaces how it answers from now on. */
  answer(b: Behaviour): void;
  /** Waits (polling, generous deadline) until it has received at least `n` requests. */
  waitFor(n: number, timeoutMs?: number): Promise<Received[]>;
  close(): Promise<void>;
}

/** Starts a receiver; by default it answers 204 to everything. */
export async function startReceiver(behaviour: Behaviour = () => 204): Promise<Receiver> {
  const received: Received[] = [];
  let answer = behaviour;
  const hanging: ServerResponse[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const n = received.length;
      received.push({ headers: req.headers, body: Buffer.concat(chunks).toString("utf8") });
      const r = answer(n, res);
      if (r === "hang") {
        hanging.push(res);
        return;
      }
      if (r === undefined) return;
      res.statusCode = r;
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    received,
    answer(b) {
      answer = b;
    },
    async waitFor(n, timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      while (received.length < n) {
        if (Date.now() > deadline)
          throw new Error(`receiver got ${received.length} requests, expected ${n}`);
        await new Promise((r) => setTimeout(r, 20));
      }
      return received;
    },
    async close() {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Polls `check` until it returns a value other than undefined (generous deadline). */
export async function eventually<T>(
  check: () => Promise<T | undefined>,
  timeoutMs = 30_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error("condition not met before the deadline");
    await new Promise((r) => setTimeout(r, 25));
  }
}
