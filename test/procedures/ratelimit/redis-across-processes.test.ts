import { createGrpcTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { VerifyKeyCode } from "../../../gen/latchkey/v2/keys_pb.js";
import { currentEngine, redisUrl } from "../../harness/engine.js";
import { type NodeProcess, startNodes } from "../../harness/processes.js";
import { useServer } from "../../harness/server.js";
import { type Api, typedApi } from "../../harness/typed.js";

// Three Latchkey processes on one database and one Redis keep one count: a burst of
// ratelimit.limit calls, and of keys.verifyKey calls with an auto-applied limit, spread over
// the three admits exactly the limit per window.

const HOUR = 3_600_000n;
const CALLS = 3000;
const LIMIT = 100;

/** Typed clients of one process over gRPC on its main port, as `auth` (a root key or none). */
function clientsOf(node: NodeProcess, auth: string | null): Api {
  return typedApi(createGrpcTransport({ baseUrl: node.url }), auth);
}

/**
 * Admissions per fixed window. The windows are epoch-aligned hours, so a run that crosses the
 * hour legitimately admits up to LIMIT in each; grouping by `reset` keeps the test exact anyway.
 */
function perWindow(answers: { reset: bigint; admitted: boolean }[]) {
  const windows = new Map<bigint, { calls: number; admitted: number }>();
  for (const a of answers) {
    const w = windows.get(a.reset) ?? { calls: 0, admitted: 0 };
    w.calls++;
    if (a.admitted) w.admitted++;
    windows.set(a.reset, w);
  }
  return [...windows.values()];
}

describe.skipIf(currentEngine() !== "postgres" || !redisUrl)(
  "one count across three Latchkey processes on Redis",
  () => {
    const s = useServer();
    let nodes: NodeProcess[] = [];
    /** Each process's clients as the test server's root key, and with no root key. */
    let asRoot: Api[] = [];
    let anonymous: Api[] = [];
    beforeAll(async () => {
      nodes = await startNodes(3, {
        databaseUrl: s.databaseUrl as string,
        rootKey: s.rootKey,
        env: { REDIS_URL: redisUrl as string },
      });
      asRoot = nodes.map((node) => clientsOf(node, s.rootKey));
      anonymous = nodes.map((node) => clientsOf(node, null));
    }, 60_000);
    afterAll(async () => {
      await Promise.all(nodes.map((n) => n.stop()));
    });

    it(`admits exactly ${LIMIT} of ${CALLS} concurrent ratelimit.limit calls`, async () => {
      const body = {
        namespace: `cluster.${Date.now()}`,
        identifier: "one-user",
        limit: BigInt(LIMIT),
        duration: HOUR,
      };
      // The namespace exists before the burst, so every call takes the same path.
      await (asRoot[0] as Api).ratelimit.limit({ ...body, cost: 0n });
      const started = performance.now();
      const answers = await Promise.all(
        Array.from({ length: CALLS }, async (_, i) => {
          const d = (await (asRoot[i % 3] as Api).ratelimit.limit(body)).data;
          return { reset: d?.reset as bigint, admitted: d?.success as boolean };
        }),
      );
      console.log(
        `${CALLS} calls over 3 processes in ${(performance.now() - started).toFixed(0)} ms`,
      );
      for (const w of perWindow(answers)) expect(w.admitted).toBe(Math.min(LIMIT, w.calls));
    });

    it(`admits exactly ${LIMIT} of ${CALLS} concurrent verifications with an auto-applied limit`, async () => {
      const k = await s.seed.key({
        ratelimits: [{ name: "requests", limit: LIMIT, duration: 3_600_000, autoApply: true }],
      });
      const started = performance.now();
      const answers = await Promise.all(
        Array.from({ length: CALLS }, async (_, i) => {
          const d = (await (anonymous[i % 3] as Api).keys.verifyKey({ key: k.key })).data;
          expect([VerifyKeyCode.VALID, VerifyKeyCode.RATE_LIMITED]).toContain(d?.code);
          return {
            reset: d?.ratelimits[0]?.reset as bigint,
            admitted: d?.code === VerifyKeyCode.VALID,
          };
        }),
      );
      console.log(
        `${CALLS} verifications over 3 processes in ${(performance.now() - started).toFixed(0)} ms`,
      );
      for (const w of perWindow(answers)) expect(w.admitted).toBe(Math.min(LIMIT, w.calls));
    });
  },
);
