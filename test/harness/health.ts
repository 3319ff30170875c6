import * as grpc from "@grpc/grpc-js";
import { service as healthService } from "grpc-health-check";

/** What `GET /health/ready` answered. */
export interface ReadyAnswer {
  status: number;
  body: { status: string; failing?: string[] };
}

/** `GET <base>/health/ready`. */
export async function askReady(base: string): Promise<ReadyAnswer> {
  const res = await fetch(`${base}/health/ready`);
  return { status: res.status, body: (await res.json()) as ReadyAnswer["body"] };
}

/**
 * Asks `/health/ready` until it answers `status` (readiness is cached, and a dependency's
 * failure takes a probe to be seen), failing after a generous deadline.
 */
export async function readyWhen(base: string, status: number): Promise<ReadyAnswer> {
  const deadline = Date.now() + 15_000;
  let last = await askReady(base);
  while (last.status !== status && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 25));
    last = await askReady(base);
  }
  if (last.status !== status) {
    throw new Error(`/health/ready stayed ${last.status} ${JSON.stringify(last.body)}`);
  }
  return last;
}

/** A `grpc.health.v1.Health` client of the gRPC port. */
export interface HealthClient {
  /** Check: the status's name (`SERVING`), or the call's error. */
  check(service: string): Promise<string>;
  /** Watch: each status the stream sends, until it ends (`ended` is its final status code). */
  watch(service: string): HealthWatch;
  close(): void;
}

export interface HealthWatch {
  statuses: string[];
  /** Resolves with the stream's final gRPC status code. */
  ended: Promise<number>;
  /**
   * Resolves once the stream has sent `status` as its `from`-th message or later; rejects
   * when the stream ends first, or after a generous deadline.
   */
  until(status: string, from?: number): Promise<void>;
  cancel(): void;
}

const HealthStub = grpc.makeGenericClientConstructor(healthService, "Health");

type Stub = grpc.Client & {
  check(
    req: { service: string },
    cb: (err: grpc.ServiceError | null, res: { status: string }) => void,
  ): void;
  watch(req: { service: string }): grpc.ClientReadableStream<{ status: string }>;
};

export function healthClient(port: number): HealthClient {
  const stub = new HealthStub(
    `127.0.0.1:${port}`,
    grpc.credentials.createInsecure(),
  ) as unknown as Stub;
  return {
    check: (service) =>
      new Promise((resolve, reject) =>
        stub.check({ service }, (err, res) => (err ? reject(err) : resolve(res.status))),
      ),
    watch(service) {
      const stream = stub.watch({ service });
      const statuses: string[] = [];
      const waiting: { status: string; resolve: () => void }[] = [];
      stream.on("data", (msg: { status: string }) => {
        statuses.push(msg.status);
        for (const w of waiting) if (w.status === msg.status) w.resolve();
      });
      const ended = new Promise<number>((resolve) => {
        stream.on("status", (s: grpc.StatusObject) => resolve(s.code));
        stream.on("error", () => {});
      });
      return {
        statuses,
        ended,
        until: (status, from = 0) =>
          statuses.slice(from).includes(status)
            ? Promise.resolve()
            : new Promise<void>((resolve, reject) => {
                const timer = setTimeout(
                  () => reject(new Error(`no ${status} within 15 s; sent ${statuses.join()}`)),
                  15_000,
                );
                waiting.push({
                  status,
                  resolve: () => {
                    clearTimeout(timer);
                    resolve();
                  },
                });
                void ended.then((code) => {
                  clearTimeout(timer);
                  reject(new Error(`ended (${code}) without ${status}; sent ${statuses.join()}`));
                });
              }),
        cancel: () => stream.cancel(),
      };
    },
    close: () => stub.close(),
  };
}
