// Credits on one hot key, on PostgreSQL: 50 connections (autocannon) on a key with credits,
// then on one without on the same server. The balance left must be exactly the start minus
// the VALID answers the server counted.
import { type Answers, answersBetween, call, metricsOf, seedKey, verify } from "../../lib/api.ts";
import { withDatabase, withSql } from "../../lib/database.ts";
import { type AutocannonResult, autocannonLoad } from "../../lib/load/closed-loop.ts";
import { type Disturbance, measureQuietly } from "../../lib/quiet.ts";
import { withLatchkey } from "../../lib/server.ts";
import { ratio, sleep } from "../../lib/stats.ts";
import type { VerifyContext } from "./common.ts";

export const CREDITS_TARGET = 0.3;
const START = 100_000_000;

type Load = AutocannonResult & { machine: Disturbance; answers: Answers };

export interface CreditsResult {
  connections: number;
  startCredits: number;
  withCredits: Load;
  withoutCredits: Load;
  ratio: number | null;
  exactness: {
    remainingInDb: number;
    remainingViaGetKey: number | undefined;
    validAnswersCountedByServer: number;
    validAnswersReceivedByClient: number;
    exact: boolean;
  };
}

export async function creditsPart(context: VerifyContext): Promise<CreditsResult> {
  return withDatabase("verify", (db) =>
    withLatchkey({ databaseUrl: db.url }, async (lk) => {
      const withCredits = await seedKey(lk.base, { credits: { remaining: START } });
      const plain = await seedKey(lk.base, {}, withCredits.apiId);
      const first = await verify(lk.base, withCredits.key);
      context.check(
        first.code === "VALID" && first.credits === START - 1,
        `credits: first answer ${JSON.stringify(first)}`,
      );
      const load = (key: string) =>
        autocannonLoad({
          url: `${lk.base}/v2/keys.verifyKey`,
          body: JSON.stringify({ key }),
          seconds: context.settings.seconds,
          warmupSeconds: context.settings.warmupSeconds,
          verifyBody: (b) => b.includes('"code":"VALID"'),
        });
      const before = await metricsOf(lk.admin);
      // Not repeated when disturbed: the client's counts must cover every request sent.
      const c = await measureQuietly(context.quiet, () => load(withCredits.key), 0);
      await sleep(1000); // requests cut off by autocannon's stop finish on the server
      const answers = answersBetween("credits", before, await metricsOf(lk.admin), context.check);
      const serverValid = 1 + (answers.codes.VALID ?? 0);
      const remaining = await withSql(db.url, async (sql) => {
        const [row] = await sql`select remaining from keys where id = ${withCredits.keyId}`;
        return Number(row?.remaining);
      });
      const viaApi = await call(lk.base, "keys.getKey", { keyId: withCredits.keyId });
      context.check(
        c.non2xx === 0 && c.errors === 0,
        `credits: ${c.non2xx} non-2xx, ${c.errors} errors`,
      );
      context.check(c.notValid === 0, `credits: ${c.notValid} answers not VALID`);
      const received = 1 + c.answered2xx - (c.notValid ?? 0);
      const exact = remaining === START - serverValid;
      context.check(exact, `credits: remaining ${remaining} != ${START} - ${serverValid}`);
      // The server's count includes the requests autocannon cut off when it stopped.
      context.check(
        serverValid >= received && serverValid - received <= 100,
        `credits: the server counted ${serverValid} VALID, the client read ${received}`,
      );
      const before2 = await metricsOf(lk.admin);
      const p = await measureQuietly(context.quiet, () => load(plain.key));
      const plainAnswers = answersBetween(
        "no credits",
        before2,
        await metricsOf(lk.admin),
        context.check,
      );
      const out = {
        connections: 50,
        startCredits: START,
        withCredits: { ...c, answers },
        withoutCredits: { ...p, answers: plainAnswers },
        ratio: ratio(c.rps, p.rps),
        exactness: {
          remainingInDb: remaining,
          remainingViaGetKey: viaApi.credits?.remaining,
          validAnswersCountedByServer: serverValid,
          validAnswersReceivedByClient: received,
          exact,
        },
      };
      console.log(
        `with credits ${c.rps} req/s, without ${p.rps}: ratio ${out.ratio};` +
          ` balance ${remaining} = ${START} - ${serverValid}: ${exact ? "exact" : "NOT EXACT"}`,
      );
      return out;
    }),
  );
}
