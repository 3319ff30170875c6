import { deliveryBody } from "../domain/webhooks/events.js";
import type { Db } from "../storage/db.js";
import { cursorMove, cursorTake, keysExpiredAfter } from "../storage/queries/webhook-cursors.js";
import { deliveryEnqueue } from "../storage/queries/webhook-deliveries.js";
import { endpointsSubscribing } from "../storage/queries/webhook-endpoints.js";

/** Keys one transaction of the pass reads at most. */
export const EXPIRY_BATCH = 500;
/** Transactions one pass runs at most; a longer backlog goes on at the next pass. */
const BATCHES_PER_PASS = 20;

/** The cursor's text: the expiry instant read up to, and the last key id read at it. */
function parse(position: string | null, now: number): { at: number; id: string | null } {
  if (position === null) return { at: now, id: null };
  const colon = position.indexOf(":");
  const id = position.slice(colon + 1);
  return { at: Number(position.slice(0, colon)), id: id === "" ? null : id };
}

/**
 * One batch: the keys that expired after the cursor and by `now`, each announced as
 * `key.expired` to the endpoints of its workspace that subscribe, and the cursor moved past
 * them, in one transaction. The cursor row is taken `for update skip locked`: one process
 * at a time runs the pass, and a restart or another process goes on from where it stopped,
 * so each expiry is announced once. A database that never ran the pass starts at `now`.
 * Answers how many keys were read (undefined when another process holds the cursor).
 */
async function expiryBatch(db: Db, now: number): Promise<number | undefined> {
  return db.transaction(async (tx) => {
    const cursor = await cursorTake(tx, "key.expired");
    if (!cursor) return undefined;
    const from = parse(cursor.position, now);
    const keys = await keysExpiredAfter(tx, from.at, from.id, now, EXPIRY_BATCH);
    const workspaces = [...new Set(keys.map((k) => k.workspaceId))];
    const subscribed = new Set(
      (await endpointsSubscribing(tx, workspaces, ["key.expired"])).map((e) => e.workspaceId),
    );
    for (const ws of subscribed) {
      const events = keys
        .filter((k) => k.workspaceId === ws)
        .map((k) => ({
          type: "key.expired",
          body: deliveryBody(
            { type: "key.expired", data: { keyId: k.id, apiId: k.apiId, expires: k.expiresAt } },
            now,
          ),
          dedupeKey: null,
        }));
      await deliveryEnqueue(tx, ws, events, now);
    }
    const last = keys.at(-1);
    // Nothing read: the cursor stays (the next pass reads from it to its own now), so an
    // idle pass writes nothing. A short batch read everything due by `now`: the cursor moves
    // to `now` itself.
    if (last || cursor.position === null) {
      const position =
        keys.length === EXPIRY_BATCH && last ? `${last.expiresAt}:${last.id}` : `${now}:`;
      await cursorMove(tx, "key.expired", position);
    }
    return keys.length;
  });
}

/** Runs batches until the backlog is read (or the pass's bound); answers the keys read. */
export async function expiryPass(db: Db, now: number): Promise<number> {
  let read = 0;
  for (let i = 0; i < BATCHES_PER_PASS; i++) {
    const n = await expiryBatch(db, now);
    if (n === undefined) break;
    read += n;
    if (n < EXPIRY_BATCH) break;
  }
  return read;
}
