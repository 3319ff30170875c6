// Webhooks: how fast one node drains a backlog of deliveries to a local receiver (every
// signature verified with the official standardwebhooks package), and what the outbox costs
// verification: the fixed-rate verification load (cached key, one auto-applied limit, PGlite,
// server on core 0, generator on core 1) with no endpoint, then with an endpoint subscribed to
// every event type, the server's CPU per request compared.
//
//   npm run bench -- webhooks           BENCH_EVENTS=2000, BENCH_RATE=2000, BENCH_SECONDS=20
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Webhook } from "standardwebhooks";
import type * as EventsModule from "../../src/domain/webhooks/events.ts";
import { call } from "../lib/api.ts";
import { fromDist } from "../lib/dist.ts";
import { type FixedRateResult, fixedRateOn } from "../lib/load/open-loop.ts";
import { ms, num, table } from "../lib/markdown.ts";
import { measureQuietly } from "../lib/quiet.ts";
import { defineScenario, noArgs, setting } from "../lib/scenario.ts";
import { withLatchkey } from "../lib/server.ts";
import { hotKey } from "./verify/common.ts";
import { GENERATOR_CPU, SERVER_CPU } from "./verify/fixed-rate.ts";

const ENV = { WEBHOOK_ALLOW_PRIVATE: "true", WEBHOOK_TIMEOUT_MS: "120000" };

export interface WebhookSettings {
  events: number;
  rate: number;
  seconds: number;
  warmupSeconds: number;
}

interface Verification {
  endpoint: "none" | "subscribed to every type";
  cpuUsPerRequest: number;
  p50Ms: number | null;
  p99Ms: number | null;
  achievedRate: number;
}

export interface WebhookResult {
  delivery: {
    events: number;
    received: number;
    distinct: number;
    verified: number;
    drainSeconds: number;
    perSecond: number;
  };
  verification: Verification[];
}

/** A receiver that holds every request until `open()`, then answers 204 to all. */
async function gatedReceiver() {
  const held: (() => void)[] = [];
  let open = false;
  const got: { id: string; timestamp: string; signature: string; body: string }[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const answer = () => {
        got.push({
          id: String(req.headers["webhook-id"]),
          timestamp: String(req.headers["webhook-timestamp"]),
          signature: String(req.headers["webhook-signature"]),
          body: Buffer.concat(chunks).toString("utf8"),
        });
        res.writeHead(204).end();
      };
      if (open) answer();
      else held.push(answer);
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    got,
    open() {
      open = true;
      for (const a of held.splice(0)) a();
    },
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

async function drain(s: WebhookSettings, check: (ok: boolean, p: string) => boolean) {
  const receiver = await gatedReceiver();
  try {
    return await withLatchkey({ env: ENV }, async (lk) => {
      const made = await call(lk.base, "webhooks.createEndpoint", {
        url: receiver.url,
        eventTypes: ["key.created"],
      });
      const apiId = (await call(lk.base, "apis.createApi", { name: "webhooks" })).apiId;
      // The backlog: one key.created each, eight changes at a time.
      let next = 0;
      const worker = async () => {
        while (next++ < s.events) await call(lk.base, "keys.createKey", { apiId });
      };
      await Promise.all(Array.from({ length: 8 }, worker));
      const t0 = performance.now();
      receiver.open();
      const deadline = Date.now() + 600_000;
      while (new Set(receiver.got.map((g) => g.id)).size < s.events && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 10));
      const drainSeconds = (performance.now() - t0) / 1000;
      const wh = new Webhook(made.secret);
      let verified = 0;
      for (const g of receiver.got) {
        try {
          wh.verify(g.body, {
            "webhook-id": g.id,
            "webhook-timestamp": g.timestamp,
            "webhook-signature": g.signature,
          });
          verified++;
        } catch {}
      }
      const distinct = new Set(receiver.got.map((g) => g.id)).size;
      check(distinct === s.events, `delivered ${distinct} of ${s.events} events`);
      check(verified === receiver.got.length, `${verified} of ${receiver.got.length} verified`);
      return {
        events: s.events,
        received: receiver.got.length,
        distinct,
        verified,
        drainSeconds,
        perSecond: distinct / drainSeconds,
      };
    });
  } finally {
    await receiver.close();
  }
}

async function verifyAtRate(
  s: WebhookSettings,
  context: {
    check: (ok: boolean, p: string) => boolean;
    quiet: Parameters<typeof measureQuietly>[0];
  },
  subscribed: boolean,
): Promise<Verification> {
  const receiver = await gatedReceiver();
  receiver.open();
  try {
    return await withLatchkey({ env: ENV, cpu: SERVER_CPU }, async (lk) => {
      const { EVENT_TYPES } = await fromDist<typeof EventsModule>("src/domain/webhooks/events.js");
      if (subscribed)
        await call(lk.base, "webhooks.createEndpoint", {
          url: receiver.url,
          eventTypes: [...EVENT_TYPES],
          creditsLowThreshold: 10,
        });
      const label = subscribed ? "verify, endpoint subscribed" : "verify, no endpoint";
      const seeded = await hotKey(context, lk, label);
      const config = {
        mode: "open",
        rate: s.rate,
        seconds: s.seconds,
        warmupSeconds: s.warmupSeconds,
        url: `${lk.base}/v2/keys.verifyKey`,
        body: JSON.stringify({ key: seeded.key }),
        expectCode: "VALID",
        maxSockets: 50,
      } as const;
      const watch = { cpu: GENERATOR_CPU, eventLoopUrl: `${lk.admin}/metrics` };
      const r: FixedRateResult = await measureQuietly(
        context.quiet,
        () => fixedRateOn(lk.pid, config, watch),
        0,
      );
      context.check(
        r.lost === 0 && r.non2xx === 0,
        `${label}: ${r.lost} lost, ${r.non2xx} not 2xx`,
      );
      console.log(`${label}: ${r.server.cpuUsPerRequest} us/request, p99 ${r.p99Ms} ms`);
      return {
        endpoint: subscribed ? "subscribed to every type" : "none",
        cpuUsPerRequest: r.server.cpuUsPerRequest,
        p50Ms: r.p50Ms,
        p99Ms: r.p99Ms,
        achievedRate: r.achievedRate,
      };
    });
  } finally {
    await receiver.close();
  }
}

export default defineScenario<WebhookSettings, WebhookResult>({
  name: "webhooks",
  description:
    "webhook delivery throughput to a local receiver; verification CPU with the outbox on",
  settings: ({ quick, args }) => {
    noArgs("webhooks", args);
    return {
      events: setting("BENCH_EVENTS", 2000, 200, quick),
      rate: setting("BENCH_RATE", 2000, 1000, quick),
      seconds: setting("BENCH_SECONDS", 20, 4, quick),
      warmupSeconds: quick ? 2 : 10,
    };
  },
  async run({ settings: s, check, quiet }) {
    const delivery = await drain(s, check);
    console.log(JSON.stringify(delivery));
    const verification = [
      await verifyAtRate(s, { check, quiet }, false),
      await verifyAtRate(s, { check, quiet }, true),
    ];
    return { delivery, verification };
  },
  render: (r, s) =>
    [
      `A backlog of ${num(r.delivery.events, 0)} \`key.created\` deliveries (PGlite, one node, ` +
        `the defaults' concurrency: 32 at once, 4 per endpoint) drained to a local receiver in ` +
        `${num(r.delivery.drainSeconds, 2)} s: **${num(r.delivery.perSecond, 0)} deliveries/s**; ` +
        `${num(r.delivery.received, 0)} requests for ${num(r.delivery.distinct, 0)} events, ` +
        `${num(r.delivery.verified, 0)} signatures verified with \`standardwebhooks\`.`,
      table(
        ["verifyKey at a fixed rate", "rate", "server CPU per request", "p50", "p99"],
        r.verification.map((v) => [
          `endpoint: ${v.endpoint}`,
          `${num(v.achievedRate, 0)}/s of ${num(s.rate, 0)}/s`,
          `${num(v.cpuUsPerRequest, 0)} us`,
          ms(v.p50Ms, 3),
          ms(v.p99Ms, 2),
        ]),
      ),
    ].join("\n\n"),
});
