import type { MessageInitShape } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import type {
  DeleteKeyRequest,
  DeleteKeyResponseSchema,
} from "../../../gen/latchkey/v2/keys_pb.js";
import { errors } from "../../errors/service-error.js";
import {
  keyCopyCreditsToDependents,
  keyHardDelete,
  keySoftDelete,
} from "../../storage/queries/keys.js";
import { authorize } from "../auth.js";
import { principalOf } from "../call.js";
import type { Deps } from "../deps.js";
import { mutate } from "../mutation.js";
import { invalidateKeys } from "./credits-holder.js";
import { findKey } from "./find-key.js";

/**
 * Revokes a key. By default it is marked deleted: it disappears from every procedure and
 * its hash stays reserved. `permanent` removes it with its links; a rerolled key still in
 * its grace period keeps spending the balance it shared with this one.
 */
export async function deleteKey(
  deps: Deps,
  req: DeleteKeyRequest,
  ctx: HandlerContext,
): Promise<MessageInitShape<typeof DeleteKeyResponseSchema>> {
  const { workspaceId } = principalOf(ctx);
  const found = await findKey(deps.db, workspaceId, req.keyId);
  authorize(ctx, { apiId: found.apiId });
  await mutate(deps, ctx, async (tx, change) => {
    const key = await findKey(tx, workspaceId, req.keyId, true);
    if (req.permanent) {
      // Keys spending this key's balance (a rerolled predecessor) get a copy of it.
      invalidateKeys(change, await keyCopyCreditsToDependents(tx, key, change.now));
      await keyHardDelete(tx, key.id);
    } else if (!(await keySoftDelete(tx, key.id, change.now))) {
      throw errors.keyNotFound();
    }
    change.audit({
      event: "key.delete",
      resourceType: "key",
      resourceId: key.id,
      description: `${req.permanent ? "Permanently deleted" : "Deleted"} key ${key.id}.`,
    });
    change.emit({
      type: "key.deleted",
      data: { keyId: key.id, apiId: key.apiId, permanent: req.permanent === true },
    });
    change.invalidate({ kind: "key", workspaceId, apiId: key.apiId, id: key.id, hash: key.hash });
  });
  return { data: {} };
}
