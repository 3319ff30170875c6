import { ConnectError } from "@connectrpc/connect";
import { ErrorDetailSchema } from "../../gen/latchkey/v2/common_pb.js";
import { currentEngine } from "./engine.js";

/**
 * Rounds of each race. PGlite has one connection, so its transactions never overlap and a
 * race cannot happen there: two rounds check that the calls still answer as they should.
 */
export const ROUNDS = currentEngine() === "postgres" ? 10 : 2;

/**
 * How a typed call ended: 200 with its answer, or the HTTP status, catalog code and detail
 * of its refusal (status 0 when the refusal carries no error detail, which no answer may).
 */
export type Outcome<T> =
  | { status: 200; value: T; errorCode?: undefined; detail?: undefined }
  | { status: number; value?: undefined; errorCode: string; detail: string };

/** Awaits a typed call and says how it ended, without throwing for a refusal. */
export async function settle<T>(call: Promise<T>): Promise<Outcome<T>> {
  try {
    return { status: 200, value: await call };
  } catch (err) {
    const e = ConnectError.from(err);
    const d = e.findDetails(ErrorDetailSchema)[0];
    return { status: d?.status ?? 0, errorCode: d?.code ?? "", detail: d?.detail ?? e.message };
  }
}

type Outcomes<T extends readonly (() => Promise<unknown>)[]> = {
  -readonly [K in keyof T]: T[K] extends () => Promise<infer R> ? Outcome<R> : never;
};

/**
 * Starts every call at once and waits for all. Each answer must have one of the `allowed`
 * statuses (a 5xx never is): otherwise this throws with the answers, so a failing round says
 * what the server answered.
 */
export async function together<T extends readonly (() => Promise<unknown>)[]>(
  calls: readonly [...T],
  allowed: readonly number[],
): Promise<Outcomes<T>> {
  const results = await Promise.all(calls.map((call) => settle(call())));
  const wrong = results.filter((r) => !allowed.includes(r.status));
  if (wrong.length > 0) {
    const seen = wrong.map((r) => `${r.status} ${r.errorCode ?? ""} ${r.detail ?? ""}`);
    throw new Error(`answers outside ${allowed.join("/")}: ${seen.join("; ")}`);
  }
  return results as Outcomes<T>;
}

/** The number of answers with this status. */
export function countOf(results: readonly Outcome<unknown>[], status: number): number {
  return results.filter((r) => r.status === status).length;
}
