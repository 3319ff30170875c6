import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { currentEngine, redisUrl } from "../../harness/engine.js";
import { type NodeProcess, startNodes } from "../../harness/processes.js";
import { useServer } from "../../harness/server.js";

// biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON bodies
type Json = any;

const HOUR = 3_600_000;
const CALLS = 3000;
const LIMIT = 100;

/** POST /v2/<procedure>; `rootKey` undefined sends no Authorization header. */
async function post(url: string, procedure: string, body: unknown, rootKey?: string) {
  const res = await fetch(`${url}/v2/${procedure}`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      ...(rootKey === undefined ? {} : { authorization: `Bearer ${rootKey}` }),
    },
    body: JSON.stringify(body),
  });
  const json: Json = await res.json();
  if (res.status !== 200)
    throw new Error(`${procedure} answered ${res.status}: ${JSON.stringify(json)}`);
  return json.data;
}

/**
 * Admissions per fixed window. The windows are epoch-aligned hours, so a run that crosses the
 * hour legitimately admits up to LIMIT in each; grouping by `reset` keeps the test exact anyway.
 */
function perWindow(answers: { reset: number; admitted: boolean }[]) {
  const windows = new Map<number, { calls: number; admitted: number }>();
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
    beforeAll(async () => {
      nodes = await startNodes(3, {
        databaseUrl: s.databaseUrl as string,
        rootKey: s.rootKey,
        env: { REDIS_URL: redisUrl as string },
      });
    }, 60_000);
    afterAll(async () => {
      await Promise.all(nodes.map((n) => n.stop()));
    });

    it(`admits exactly ${LIMIT} of ${CALLS} concurrent ratelimit.limit calls`, async () => {
      const body = {
        namespace: `cluster.${Date.now()}`,
        identifier: "one-user",
        limit: LIMIT,
        duration: HOUR,
      };
      // The namespace exists before the burst, so every call takes the same path.
      await post((nodes[0] as NodeProcess).url, "ratelimit.limit", { ...body, cost: 0 }, s.rootKey);
      const started = performance.now();
      const answers = await Promise.all(
        Array.from({ length: CALLS }, async (_, i) => {
          const d = await post(
            (nodes[i % 3] as NodeProcess).url,
            "ratelimit.limit",
            body,
            s.rootKey,
          );
          return { reset: d.reset as number, admitted: d.success as boolean };
        }),
      );
      console.log(
        `${CALLS} calls over 3 processes in ${(performance.now() - started).toFixed(0)} ms`,
      );
      for (const w of perWindow(answers)) expect(w.admitted).toBe(Math.min(LIMIT, w.calls));
    });

    it(`admits exactly ${LIMIT} of ${CALLS} concurrent verifications with an auto-applied limit`, async () => {
      const k = await s.seed.key({
        ratelimits: [{ name: "requests", limit: LIMIT, duration: HOUR, autoApply: true }],
      });
      const started = performance.now();
      const answers = await Promise.all(
        Array.from({ length: CALLS }, async (_, i) => {
          const d = await post((nodes[i % 3] as NodeProcess).url, "keys.verifyKey", { key: k.key });
          expect(["VALID", "RATE_LIMITED"]).toContain(d.code);
          return { reset: d.ratelimits[0].reset as number, admitted: d.code === "VALID" };
        }),
      );
      console.log(
        `${CALLS} verifications over 3 processes in ${(performance.now() - started).toFixed(0)} ms`,
      );
      for (const w of perWindow(answers)) expect(w.admitted).toBe(Math.min(LIMIT, w.calls));
    });
  },
);
