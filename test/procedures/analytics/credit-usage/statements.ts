import type { JsonObject } from "@bufbuild/protobuf";
import { expect } from "vitest";
import {
  type CreditUsageBucket,
  CreditUsageGranularity,
} from "../../../../gen/latchkey/v2/analytics_pb.js";
import type { TestServer } from "../../../harness/server.js";
import type { Api } from "../../../harness/typed.js";

// How the analytics.getCreditUsage tests read statements and balances.

export const HOUR = 3_600_000;
export const DAY = 86_400_000;
export const { HOUR: BY_HOUR, DAY: BY_DAY, MONTH: BY_MONTH } = CreditUsageGranularity;

/** Whose statement: one of the request's subject fields. */
export type Subject = { keyId: string } | { identityId: string } | { externalId: string };

/** A statement's buckets as plain numbers, easy to compare. */
export interface Bucket {
  time: number;
  spent: number;
  refilled: number;
  adjusted: number;
  verifications: JsonObject;
}

/** analytics.getCreditUsage through `api` (the all-powerful root key unless given). */
export async function statementOf(
  s: TestServer,
  subject: Subject,
  start: number,
  end: number,
  granularity: CreditUsageGranularity = BY_DAY,
  api: Api = s.api,
): Promise<Bucket[]> {
  const res = await api.analytics.getCreditUsage({
    ...subject,
    start: BigInt(start),
    end: BigInt(end),
    granularity,
  });
  return res.data.map(plain);
}

function plain(b: CreditUsageBucket): Bucket {
  return {
    time: Number(b.time),
    spent: Number(b.spent),
    refilled: Number(b.refilled),
    adjusted: Number(b.adjusted),
    verifications: (b.verifications ?? {}) as JsonObject,
  };
}

/** The credit columns of a statement summed over its buckets. */
export function totals(buckets: readonly Bucket[]) {
  const t = { spent: 0, refilled: 0, adjusted: 0 };
  for (const b of buckets) {
    t.spent += b.spent;
    t.refilled += b.refilled;
    t.adjusted += b.adjusted;
  }
  return t;
}

/**
 * Checks the rule a statement keeps: the balance at the start, plus refilled and adjusted,
 * less spent, is the balance at the end (unlimited counted as 0).
 */
export function expectBalanced(
  buckets: readonly Bucket[],
  initial: number,
  final: number | undefined,
  what: string,
): void {
  const t = totals(buckets);
  expect(initial + t.refilled + t.adjusted - t.spent, `${what}: ${JSON.stringify(t)}`).toBe(
    final ?? 0,
  );
}

/** A key's own balance as keys.getKey reads it (undefined: unlimited). */
export async function balanceOf(s: TestServer, keyId: string): Promise<number | undefined> {
  const remaining = (await s.api.keys.getKey({ keyId })).data?.credits?.remaining;
  return remaining === undefined ? undefined : Number(remaining);
}

/** An identity's pool as identities.getIdentity reads it (undefined: unlimited). */
export async function poolOf(s: TestServer, identity: string): Promise<number | undefined> {
  const remaining = (await s.api.identities.getIdentity({ identity })).data?.credits?.remaining;
  return remaining === undefined ? undefined : Number(remaining);
}

/**
 * Moves the server's clock forward to the start of the UTC month after next and answers it:
 * each test gets whole hours, days and months of its own, and time never goes back.
 */
export function freshMonth(s: TestServer): number {
  const d = new Date(s.clock.now());
  const t = Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 2, 1);
  s.clock.set(t);
  return t;
}

/** An identity with this credit pool, made through identities.createIdentity. */
export async function pooledIdentity(s: TestServer, remaining: number) {
  const externalId = `ledger_${Math.random().toString(36).slice(2)}`;
  const res = await s.api.identities.createIdentity({
    externalId,
    credits: { remaining: BigInt(remaining) },
  });
  return { id: res.data?.identityId as string, externalId };
}
