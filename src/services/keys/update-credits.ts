import type { MessageInitShape } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import { CreditsSchema } from "../../../gen/latchkey/v2/common_pb.js";
import {
  CreditsOperation,
  type UpdateCreditsRequest,
  UpdateCreditsRequestSchema,
  type UpdateCreditsResponseSchema,
} from "../../../gen/latchkey/v2/keys_pb.js";
import { changeEntry } from "../../domain/credit-ledger.js";
import { applyRefill } from "../../domain/credits.js";
import { errors } from "../../errors/service-error.js";
import { creditLedgerAppend } from "../../storage/queries/credit-ledger.js";
import { keyWrite } from "../../storage/queries/keys.js";
import { authorize } from "../auth.js";
import { principalOf } from "../call.js";
import type { Deps } from "../deps.js";
import { claimOrReplay, idempotentRequest, keepAnswer } from "../idempotency.js";
import { mutate } from "../mutation.js";
import { creditsHolder, writeHolder } from "./credits-holder.js";
import { toCreditsMessage } from "./credits-input.js";
import { findKey } from "./find-key.js";

/**
 * Sets, increments or decrements the balance of a key (decrement stops at 0). A pending
 * refill is applied first, so the operation acts on the balance a verification would see.
 * `set` with null makes the key unlimited and drops its refill.
 *
 * With an idempotency key the change is made once: the key is claimed in the change's own
 * transaction, so a repeat (or a racing first call, on any node: it waits on the claim) answers
 * the stored credits and changes nothing, and a refused change (an error) leaves no record.
 */
export async function updateCredits(
  deps: Deps,
  req: UpdateCreditsRequest,
  ctx: HandlerContext,
): Promise<MessageInitShape<typeof UpdateCreditsResponseSchema>> {
  const op = req.operation;
  if (op !== CreditsOperation.SET && req.value === undefined) {
    throw errors.badField("/value", "is required when the operation is increment or decrement");
  }
  const { workspaceId, rootKeyId } = principalOf(ctx);
  const found = await findKey(deps.db, workspaceId, req.keyId);
  authorize(ctx, { apiId: found.apiId });
  const once =
    req.idempotencyKey === undefined
      ? undefined
      : idempotentRequest(
          "keys.updateCredits",
          { workspaceId, rootKeyId },
          UpdateCreditsRequestSchema,
          req,
          req.idempotencyKey,
        );
  const data = await mutate(deps, ctx, async (tx, change) => {
    if (once !== undefined) {
      const prior = await claimOrReplay(tx, once, change.now, CreditsSchema);
      if (prior !== undefined) return prior;
    }
    const key = await findKey(tx, workspaceId, req.keyId, true);
    const holder = await creditsHolder(tx, key);
    const stored = holder.remaining;
    const current = applyRefill(holder, change.now);
    // Read before the change: with no refill due, `current` is `holder` itself.
    const refilled = current.remaining;
    const value = req.value === undefined ? null : Number(req.value);
    let next = current;
    if (op === CreditsOperation.SET) {
      next =
        value === null
          ? { remaining: null, refillAmount: null, refillDay: null, lastRefillAt: null }
          : { ...current, remaining: value };
    } else {
      if (current.remaining === null) {
        throw errors.badField(
          "/operation",
          "cannot increment or decrement a key with unlimited credits",
        );
      }
      const remaining =
        op === CreditsOperation.INCREMENT
          ? current.remaining + (value as number)
          : Math.max(0, current.remaining - (value as number));
      if (!Number.isSafeInteger(remaining))
        throw errors.badField("/value", "would raise the balance above 2^53-1");
      next = { ...current, remaining };
    }
    Object.assign(holder, next);
    holder.updatedAt = change.now;
    await writeHolder(tx, change, key, holder);
    if (holder.id === key.id) await keyWrite(tx, key);
    await creditLedgerAppend(tx, change.now, [
      changeEntry(holder.id, stored, refilled, next.remaining),
    ]);
    change.audit({
      event: "key.update",
      resourceType: "key",
      resourceId: key.id,
      description: `Updated key ${key.id}, set remaining to ${next.remaining ?? "unlimited"}.`,
    });
    change.emit({
      type: "key.updated",
      data: { keyId: key.id, apiId: key.apiId, changed: ["credits"] },
    });
    change.invalidate({ kind: "key", workspaceId, apiId: key.apiId, id: key.id, hash: key.hash });
    const answer = toCreditsMessage(next) ?? {};
    if (once !== undefined) await keepAnswer(tx, once, CreditsSchema, answer);
    return answer;
  });
  return { data };
}
