import type { MessageInitShape } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import type {
  SettleCreditsRequest,
  SettleCreditsResponseSchema,
} from "../../../gen/latchkey/v2/keys_pb.js";
import { errors } from "../../errors/service-error.js";
import { reservationGet, reservationKeyHash } from "../../storage/queries/reservations.js";
import { authorize } from "../auth.js";
import { principalOf } from "../call.js";
import type { Deps } from "../deps.js";
import { mutate } from "../mutation.js";
import { settlementData, settleReservation, storedSettlement } from "./reservation-settlement.js";

/**
 * Settles a reservation made by verifyKey with `credits.reserve`: charges `used` in all,
 * giving back or charging the difference (see `settle` in src/domain/reservations.ts). It is
 * checked with the permission that verifies the key, since settling finishes the charge the
 * verification began and gives back at most what it took.
 *
 * Exactly once: the reservation's row is locked, so two settles of one reservation, on any
 * node, take turns; the second finds the settlement stored and answers it, moving nothing
 * (whatever its `used`: the answer's `used` says what was charged). A reservation past its
 * expiry is settled in full, as the sweep would have.
 */
export async function settleCredits(
  deps: Deps,
  req: SettleCreditsRequest,
  ctx: HandlerContext,
): Promise<MessageInitShape<typeof SettleCreditsResponseSchema>> {
  const { workspaceId } = principalOf(ctx);
  const found = await reservationGet(deps.db, workspaceId, req.reservationId);
  if (found === undefined) throw errors.reservationNotFound();
  authorize(ctx, { apiId: found.apiId });
  const data = await mutate(deps, ctx, async (tx, change) => {
    const r = await reservationGet(tx, workspaceId, req.reservationId, true);
    // Deleted a day after its settlement, between the read above and this one.
    if (r === undefined) throw errors.reservationNotFound();
    const prior = storedSettlement(r);
    if (prior !== undefined) return settlementData(r, prior);
    const expired = r.expiresAt <= change.now;
    const s = await settleReservation(
      tx,
      r,
      expired ? r.amount : Number(req.used),
      expired,
      change.now,
    );
    // A settlement changes the key's credits the way updateCredits does, so it is audited as
    // one (the verification that made the reservation is an event, not an audit record).
    change.audit({
      event: "key.update",
      resourceType: "key",
      resourceId: r.keyId,
      description: `Settled reservation ${r.id} of key ${r.keyId}: used ${s.used} of ${r.amount}, refunded ${s.refunded}, shortfall ${s.shortfall}${expired ? " (expired)" : ""}.`,
    });
    change.emit({
      type: "key.updated",
      data: { keyId: r.keyId, apiId: r.apiId, changed: ["credits"] },
    });
    if (s.refunded > 0 || s.used > r.amount) {
      // Answers that spend nothing report cached balances: drop the ones this moved.
      const hash = await reservationKeyHash(tx, r.keyId);
      if (hash !== undefined) {
        change.invalidate({ kind: "key", workspaceId, apiId: r.apiId, id: r.keyId, hash });
      }
      if (r.identityId !== null)
        change.invalidate({ kind: "identity", workspaceId, id: r.identityId });
    }
    return settlementData(r, s);
  });
  return { data };
}
