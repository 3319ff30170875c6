import { ConnectError } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ErrorDetailSchema } from "../../../../gen/latchkey/v2/common_pb.js";
import { VerifyKeyCode } from "../../../../gen/latchkey/v2/keys_pb.js";
import { currentEngine } from "../../../harness/engine.js";
import { type NodeProcess, startNodes } from "../../../harness/processes.js";
import { useServer } from "../../../harness/server.js";
import { typedApiAt } from "./calls.js";

// keys.verifyKey commits a spend before it answers VALID: a process killed with SIGKILL in
// the middle of a burst of verifications leaves every acknowledged VALID spent, and spends at
// most the ones still in flight besides.

/** A bound on any polling loop, whatever the clock says. */
const MAX_POLLS = 100_000;
const CREDITS = 2000;
const WORKERS = 64;
const KILL_AFTER_VALID = 300;
/** Requests per worker at most: the burst ends even if the kill never happens. */
const MAX_PER_WORKER = 100;

// The process and the test share one database only on PostgreSQL.
describe.skipIf(currentEngine() !== "postgres")(
  "keys.verifyKey killed during a credit burst",
  () => {
    const s = useServer();
    let node: NodeProcess | undefined;
    beforeAll(async () => {
      [node] = await startNodes(1, { databaseUrl: s.databaseUrl as string, rootKey: s.rootKey });
    });
    afterAll(async () => {
      await node?.stop("SIGKILL");
    });

    it("leaves no acknowledged VALID unspent and spends at most what was in flight", async () => {
      const target = node as NodeProcess;
      const anonymous = typedApiAt(target.url, null);
      const k = await s.seed.key({ credits: { remaining: CREDITS } });
      let validReceived = 0;
      let otherAnswers = 0;
      let failed = 0;
      let inFlight = 0;
      let inFlightAtKill = -1;
      let killed = false;

      const worker = async () => {
        for (let i = 0; i < MAX_PER_WORKER && !killed; i++) {
          inFlight++;
          try {
            const res = await anonymous.keys.verifyKey(
              { key: k.key, credits: { cost: 1n } },
              { timeoutMs: 10_000 },
            );
            if (res.data?.code === VerifyKeyCode.VALID) validReceived++;
            else otherAnswers++;
          } catch (err) {
            // An answer of the server (an error with its detail) is not expected; a connection
            // reset by the kill is.
            if (ConnectError.from(err).findDetails(ErrorDetailSchema).length > 0) otherAnswers++;
            else failed++;
          } finally {
            inFlight--;
          }
          if (!killed && validReceived >= KILL_AFTER_VALID) {
            killed = true;
            inFlightAtKill = inFlight;
            target.child.kill("SIGKILL");
          }
        }
      };
      await Promise.all(Array.from({ length: WORKERS }, worker));
      expect(killed).toBe(true);
      expect(await target.stop()).toBeNull();

      // Let the database finish statements the dead process had sent (they commit or roll
      // back on their own), so the balance read below is final.
      const deadline = Date.now() + 10_000;
      for (let i = 0; i < MAX_POLLS && Date.now() <= deadline; i++) {
        const busy = await s.db.query<{ n: number }>(
          `select count(*)::int as n from pg_stat_activity
         where datname = current_database() and pid <> pg_backend_pid()
           and backend_type = 'client backend' and state <> 'idle'`,
        );
        if (busy[0]?.n === 0) break;
      }
      const rows = await s.db.query<{ remaining: number }>(
        "select remaining from keys where id = $1",
        [k.keyId],
      );
      const remaining = Number(rows[0]?.remaining);
      const spent = CREDITS - remaining;
      console.log(
        `kill -9 burst: ${validReceived} VALID received, ${otherAnswers} other answers, ` +
          `${failed} failed requests, ${inFlightAtKill} in flight at the kill; ` +
          `remaining ${remaining}, spent ${spent}, spent without acknowledgement ${spent - validReceived}`,
      );
      expect(validReceived).toBeGreaterThanOrEqual(KILL_AFTER_VALID);
      expect(otherAnswers).toBe(0);
      // Every acknowledged VALID was committed…
      expect(remaining + validReceived).toBeLessThanOrEqual(CREDITS);
      // …and nothing was spent beyond the requests that were still in flight.
      expect(CREDITS - (remaining + validReceived)).toBeLessThanOrEqual(inFlightAtKill);
    });
  },
);
