import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { VerifyKeyCode } from "../../../../gen/latchkey/v2/keys_pb.js";
import { startServer, type TestServer, useServer } from "../../../harness/server.js";
import { HOUR, type VerifyRequest } from "./calls.js";

// Every keys.verifyKey that resolves to a workspace (the key's, else the root key's) becomes an
// event (docs/keys.md, "Verifying keys"): it is recorded or, when the bounded buffer is full,
// dropped and counted, so `recorded + dropped` = such verifications, and what is recorded is
// written once, whole, with its outcome, key, tags and spent credits. One that resolves to none
// (an unknown key and no root key) is only counted, in latchkey_verifications_unattributed_total.

interface Made {
  request_id: string;
  outcome: string;
  key_id: string | null;
  spent_credits: number;
  tags: string[];
  /** False for a verification that resolves to no workspace: counted, never stored. */
  stored?: false;
}

/** The value of an unlabelled series of /metrics. */
function metric(text: string, name: string): number {
  const m = new RegExp(`^${name} (\\d+)$`, "m").exec(text);
  if (!m) throw new Error(`${name} is not in /metrics`);
  return Number(m[1]);
}

/** latchkey_verifications_total by code. */
function verificationsByCode(text: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const m of text.matchAll(/^latchkey_verifications_total\{code="([A-Z_]+)"\} (\d+)$/gm))
    out[m[1] as string] = Number(m[2]);
  return out;
}

async function metricsText(server: TestServer): Promise<string> {
  const res = await server.admin("/metrics");
  expect(res.status).toBe(200);
  return res.text;
}

/** Runs a verification of every outcome; returns what each event must say. */
async function verifyMix(server: TestServer): Promise<Made[]> {
  const made: Made[] = [];
  const run = async (
    req: VerifyRequest,
    outcome: VerifyKeyCode,
    keyId: string | null,
    spent = 0,
    auth: string | null = null,
  ) => {
    const res = await server.as(auth).keys.verifyKey(req);
    expect(res.data?.code).toBe(outcome);
    const requestId = res.meta?.requestId ?? "";
    expect(requestId).toMatch(/^req_/);
    made.push({
      request_id: requestId,
      outcome: VerifyKeyCode[outcome],
      key_id: keyId,
      spent_credits: spent,
      tags: req.tags ?? [],
      ...(keyId === null && auth === null ? { stored: false as const } : {}),
    });
  };
  const k = await server.seed.key({
    credits: { remaining: 5 },
    ratelimits: [{ name: "window", limit: 2, duration: HOUR, autoApply: true }],
  });
  const { VALID, USAGE_EXCEEDED, RATE_LIMITED, NOT_FOUND } = VerifyKeyCode;
  await run({ key: k.key, credits: { cost: 2n }, tags: ["mix", "x"] }, VALID, k.keyId, 2);
  await run({ key: k.key, credits: { cost: 4n } }, USAGE_EXCEEDED, k.keyId);
  await run({ key: k.key }, VALID, k.keyId, 1);
  await run({ key: k.key, tags: ["limited"] }, RATE_LIMITED, k.keyId);
  await run({ key: "sk_never_issued", tags: ["nf"] }, NOT_FOUND, null);
  const rooted = { key: "sk_never_issued", tags: ["nf", "root"] };
  await run(rooted, NOT_FOUND, null, 0, server.rootKey);
  const off = await server.seed.key({ enabled: false });
  await run({ key: off.key }, VerifyKeyCode.DISABLED, off.keyId);
  const old = await server.seed.key({ expires: 1 });
  await run({ key: old.key }, VerifyKeyCode.EXPIRED, old.keyId);
  const plain = await server.seed.key();
  const denied = { key: plain.key, permissions: "not.granted" };
  await run(denied, VerifyKeyCode.INSUFFICIENT_PERMISSIONS, plain.keyId);
  await run({ key: plain.key, credits: { cost: 0n } }, VALID, plain.keyId);
  return made;
}

const byRequest = (a: Made, b: Made) => a.request_id.localeCompare(b.request_id);

/** The verifications that must be stored, as their rows read. */
const storedOnes = (made: Made[]) =>
  made.filter((m) => m.stored !== false).map(({ stored: _, ...row }) => row);

/** latchkey_verifications_unattributed_total{outcome="NOT_FOUND"}, 0 when absent. */
function unattributed(text: string): number {
  const m = /^latchkey_verifications_unattributed_total\{outcome="NOT_FOUND"\} (\d+)$/m.exec(text);
  return m ? Number(m[1]) : 0;
}

describe("keys.verifyKey events", () => {
  const s = useServer();

  it("writes exactly one event per verification, with what each verification did", async () => {
    const before = s.app.deps.events.stats();
    const textBefore = await metricsText(s);
    const metricsBefore = verificationsByCode(textBefore);
    const made = await verifyMix(s);
    const events = storedOnes(made);
    expect(await s.app.deps.events.flush()).toBe(true);
    const after = s.app.deps.events.stats();

    expect(after.recorded + after.dropped - (before.recorded + before.dropped)).toBe(events.length);
    // The buffer never filled: every event was recorded and is now written.
    expect(after.dropped).toBe(before.dropped);
    expect(after.written - before.written).toBe(events.length);
    expect(after.buffered).toBe(0);

    const rows = await s.db.query<Made>(
      `select request_id, outcome, key_id, spent_credits::int as spent_credits, tags
       from key_verifications
       where request_id = any($1::text[])`,
      [made.map((m) => m.request_id)],
    );
    expect([...rows].sort(byRequest)).toEqual([...events].sort(byRequest));

    const metricsAfter = verificationsByCode(await metricsText(s));
    const counted: Record<string, number> = {};
    for (const m of made) counted[m.outcome] = (counted[m.outcome] ?? 0) + 1;
    for (const [code, n] of Object.entries(counted))
      expect((metricsAfter[code] ?? 0) - (metricsBefore[code] ?? 0), code).toBe(n);
    // The unknown key verified without a root key: counted, not stored.
    const anonymous = made.length - events.length;
    expect(anonymous).toBe(1);
    expect(unattributed(await metricsText(s)) - unattributed(textBefore)).toBe(anonymous);
  });

  it("writes nothing twice when flushed again", async () => {
    const k = await s.seed.key();
    const res = await s.as(null).keys.verifyKey({ key: k.key });
    await s.app.deps.events.flush();
    await s.app.deps.events.flush();
    const rows = await s.db.query<{ n: number }>(
      "select count(*)::int as n from key_verifications where request_id = $1",
      [res.meta?.requestId],
    );
    expect(rows[0]?.n).toBe(1);
  });
});

describe("keys.verifyKey events with a full buffer", () => {
  let tiny: TestServer;
  beforeAll(async () => {
    // Two events fit; the timer would write them only after a minute, so the rest are dropped.
    tiny = await startServer({ config: { eventBufferSize: 2, eventFlushIntervalMs: 60_000 } });
  });
  afterAll(() => tiny.stop());

  it("drops what does not fit, counts it in /metrics, and written + dropped = verifications", async () => {
    const made = await verifyMix(tiny);
    const events = storedOnes(made);
    expect(await tiny.app.deps.events.flush()).toBe(true);
    const stats = tiny.app.deps.events.stats();
    const text = await metricsText(tiny);

    expect(stats.dropped).toBeGreaterThan(0);
    expect(metric(text, "latchkey_events_dropped_total")).toBe(stats.dropped);
    expect(metric(text, "latchkey_events_recorded_total")).toBe(stats.recorded);
    expect(metric(text, "latchkey_events_written_total")).toBe(stats.written);
    expect(metric(text, "latchkey_events_buffered")).toBe(0);
    expect(stats.written + stats.dropped).toBe(events.length);
    expect(
      metric(text, "latchkey_events_written_total") + metric(text, "latchkey_events_dropped_total"),
    ).toBe(events.length);

    // What was written is in the table, once; the dropped ones are not.
    const rows = await tiny.db.query<{ n: number }>(
      "select count(*)::int as n from key_verifications where request_id = any($1::text[])",
      [made.map((m) => m.request_id)],
    );
    expect(rows[0]?.n).toBe(stats.written);
    // Every verification is counted by outcome, dropped or not.
    const total = Object.values(verificationsByCode(text)).reduce((a, b) => a + b, 0);
    expect(total).toBe(made.length);

    // Once written out, the buffer takes events again.
    const k = await tiny.seed.key();
    await tiny.as(null).keys.verifyKey({ key: k.key });
    expect(tiny.app.deps.events.stats().recorded).toBe(stats.recorded + 1);
  });
});
