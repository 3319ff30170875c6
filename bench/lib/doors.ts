// A door against its ceiling: the same closed-loop loads on Latchkey and on a bare server.
import {
  type AutocannonResult,
  allAnswered2xx,
  autocannonLoad,
  type H2loadResult,
  h2loadLoad,
} from "./load/closed-loop.ts";
import { type Disturbance, measureQuietly } from "./quiet.ts";
import type { RunContext } from "./scenario.ts";

export type Measured<T> = T & { machine: Disturbance };

export interface JsonLoads {
  autocannon: Measured<AutocannonResult>;
  h2load: Measured<H2loadResult>;
}

export interface LoadSettings {
  seconds: number;
  warmupSeconds: number;
}

/**
 * A /v2 URL under autocannon (50 connections) and then h2load --h1 (50 connections), each
 * measured quietly and checked to have had only 2xx answers.
 */
export async function jsonLoads(
  context: RunContext<LoadSettings>,
  what: string,
  target: { url: string; body: string; headers?: Record<string, string> },
): Promise<JsonLoads> {
  const { seconds, warmupSeconds } = context.settings;
  const options = { ...target, seconds, warmupSeconds };
  const autocannon = await measureQuietly(context.quiet, () => autocannonLoad(options));
  context.check(
    allAnswered2xx(autocannon),
    `${what}: ${autocannon.non2xx} non-2xx, ${autocannon.errors} errors`,
  );
  const h2load = await measureQuietly(context.quiet, () => h2loadLoad(options));
  context.check(
    allAnswered2xx(h2load),
    `${what}: h2load ${h2load.succeeded} succeeded, ${h2load.ok2xx} 2xx, ${h2load.failed} failed`,
  );
  console.log(
    `${what.padEnd(28)} ${autocannon.rps} req/s (autocannon), ${h2load.rps} (h2load --h1)`,
  );
  return { autocannon, h2load };
}

/** A gRPC method under h2load: 10 HTTP/2 connections of 10 streams, one message frame. */
export async function grpcLoad(
  context: RunContext<LoadSettings>,
  what: string,
  target: { url: string; frame: Buffer; headers?: Record<string, string> },
): Promise<Measured<H2loadResult>> {
  const { seconds, warmupSeconds } = context.settings;
  const r = await measureQuietly(context.quiet, () =>
    h2loadLoad({
      url: target.url,
      body: target.frame,
      headers: { "content-type": "application/grpc", te: "trailers", ...target.headers },
      connections: 10,
      streams: 10,
      seconds,
      warmupSeconds,
    }),
  );
  context.check(
    allAnswered2xx(r),
    `${what}: h2load ${r.succeeded} succeeded, ${r.ok2xx} 2xx, ${r.failed} failed`,
  );
  console.log(`${what.padEnd(28)} ${r.rps} req/s (h2load, 10 x 10 streams)`);
  return r;
}
