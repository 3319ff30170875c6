import type { Db, Queryable } from "./db.js";
import {
  type BatchClaim,
  claimId,
  idempotencyClaimBatch,
  idempotencyStoreBatch,
} from "./queries/idempotency.js";

/**
 * A spend made exactly once: it claims an idempotency key and stores the answer built from
 * its result, in the transaction that charges it.
 */
export interface ClaimedSpend<R> {
  /** The key being verified (its balance may be held by the group's key). */
  keyId: string;
  cost: number;
  claim: BatchClaim;
  /** The answer to keep for the claim (protobuf JSON), built from the spend's result. */
  answerOf: (result: R) => string;
}

/**
 * One transaction for a batch of claimed spends: claims every member's key in one statement,
 * spends for the members that hold their claim (with `spend`, the batch statements the plain
 * spends use), stores their answers in one statement (`spend` sends it through `keep`, with
 * its own writes where it can), and commits. So a batch costs about what a plain grouped
 * spend does plus two statements, whatever its size, and a charge and its record commit
 * together or not at all. Undefined for a member whose key was claimed by another call
 * (committed, or a repeat earlier in the batch): nothing is spent for it.
 *
 * `spend` gets the members while their claim is in flight and the claimed ones as a promise:
 * it may send its locks at once, in the same round trip. Statements of one transaction run in
 * the order they are sent, so the keys are still claimed before any balance is locked, the
 * order of every other transaction that takes both (no deadlock between them).
 */
export function spendClaimed<R>(
  db: Db,
  batch: readonly ClaimedSpend<R>[],
  expiredAt: number,
  spend: (
    tx: Queryable,
    members: readonly ClaimedSpend<R>[],
    claimed: Promise<readonly ClaimedSpend<R>[]>,
    keep: (results: readonly R[]) => Promise<void>,
  ) => Promise<R[]>,
): Promise<(R | undefined)[]> {
  return db.transaction(async (tx) => {
    // A key twice in one statement would be a conflict with its own row: the first of the
    // batch tries the claim, a later repeat counts as lost and replays what the first stored.
    const firsts = firstOfEachKey(batch);
    const members = firsts.map((i) => batch[i] as ClaimedSpend<R>);
    const claiming = idempotencyClaimBatch(
      tx,
      members.map((m) => m.claim),
      expiredAt,
    ).then((won) => firsts.filter((_, j) => won.has(j)));
    const claimed = claiming.then((held) => held.map((i) => batch[i] as ClaimedSpend<R>));
    const keep = async (results: readonly R[]) => {
      const mine = await claimed;
      await idempotencyStoreBatch(
        tx,
        mine.map((s, j) => ({
          workspaceId: s.claim.workspaceId,
          key: s.claim.key,
          answer: s.answerOf(results[j] as R),
        })),
      );
    };
    const [held, results] = await Promise.all([claiming, spend(tx, members, claimed, keep)]);
    const out: (R | undefined)[] = batch.map(() => undefined);
    held.forEach((i, j) => {
      out[i] = results[j];
    });
    return out;
  });
}

/** The index of the first member of each (workspace, key). */
function firstOfEachKey(batch: readonly { claim: BatchClaim }[]): number[] {
  const seen = new Set<string>();
  const firsts: number[] = [];
  batch.forEach((s, i) => {
    const id = claimId(s.claim);
    if (seen.has(id)) return;
    seen.add(id);
    firsts.push(i);
  });
  return firsts;
}
