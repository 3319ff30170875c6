import type { MessageInitShape } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import type {
  RotateSecretRequest,
  RotateSecretResponseSchema,
} from "../../../gen/latchkey/v2/webhooks_pb.js";
import { newSigningSecret } from "../../domain/webhooks/signature.js";
import { endpointRotateSecret } from "../../storage/queries/webhook-endpoints.js";
import { authorize } from "../auth.js";
import { principalOf } from "../call.js";
import type { Deps } from "../deps.js";
import { mutate } from "../mutation.js";
import { findEndpoint } from "./find-endpoint.js";

/** How long a rotated-out secret keeps signing when the request does not say. */
const DEFAULT_GRACE_MS = 86_400_000;

/**
 * Replaces the endpoint's signing secret with a new one, answered once. The former secret
 * keeps signing (a second signature on each delivery) for the grace the request gives, a day
 * by default; a grace of 0 retires it at once. A secret rotated out earlier stops signing.
 */
export async function rotateSecret(
  deps: Deps,
  req: RotateSecretRequest,
  ctx: HandlerContext,
): Promise<MessageInitShape<typeof RotateSecretResponseSchema>> {
  const { workspaceId } = principalOf(ctx);
  const target = await findEndpoint(deps.db, workspaceId, req.endpointId);
  authorize(ctx, { endpointId: target.id });
  const secret = newSigningSecret();
  const graceMs =
    req.previousSecretExpiresInMs === undefined
      ? DEFAULT_GRACE_MS
      : Number(req.previousSecretExpiresInMs);
  const expiresAt = await mutate(deps, ctx, async (tx, change) => {
    const e = await findEndpoint(tx, workspaceId, target.id, true);
    const until = graceMs > 0 ? change.now + graceMs : null;
    const box = deps.config.webhookSecrets;
    // The former secret is sealed again under the current key as it moves.
    const previous = until === null ? null : box.seal(box.open(e.secret));
    await endpointRotateSecret(tx, e.id, box.seal(secret), previous, until, change.now);
    change.audit({
      event: "webhook.rotate_secret",
      resourceType: "webhook",
      resourceId: e.id,
      description:
        until === null
          ? `Rotated the signing secret of webhook endpoint ${e.id}; the former one is retired.`
          : `Rotated the signing secret of webhook endpoint ${e.id}; the former one signs until ${new Date(until).toISOString()}.`,
    });
    return until;
  });
  return {
    data: { secret, previousSecretExpiresAt: expiresAt === null ? undefined : BigInt(expiresAt) },
  };
}
