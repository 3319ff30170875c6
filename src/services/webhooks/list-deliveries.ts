import type { MessageInitShape } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import type {
  ListDeliveriesRequest,
  ListDeliveriesResponseSchema,
} from "../../../gen/latchkey/v2/webhooks_pb.js";
import { attemptsOf, deliveryList } from "../../storage/queries/webhook-deliveries.js";
import { authorize } from "../auth.js";
import { principalOf } from "../call.js";
import type { Deps } from "../deps.js";
import { findEndpoint } from "./find-endpoint.js";

/** Page size when the request gives none. */
const DEFAULT_LIMIT = 20;
/** Attempts shown per delivery at most: the latest. */
const ATTEMPTS_SHOWN = 50;

/** A cursor `<createdAt>:<id>`; anything else starts from the newest (a cursor is a bound). */
function parseCursor(cursor: string | undefined): { createdAt: number; id: string } | undefined {
  const m = cursor === undefined ? null : /^(\d{1,16}):(.+)$/.exec(cursor);
  return m ? { createdAt: Number(m[1]), id: m[2] as string } : undefined;
}

/** One page of an endpoint's deliveries, newest first, each with its latest attempts. */
export async function listDeliveries(
  deps: Deps,
  req: ListDeliveriesRequest,
  ctx: HandlerContext,
): Promise<MessageInitShape<typeof ListDeliveriesResponseSchema>> {
  const endpoint = await findEndpoint(deps.db, principalOf(ctx).workspaceId, req.endpointId);
  authorize(ctx, { endpointId: endpoint.id });
  const limit = req.limit ?? DEFAULT_LIMIT;
  // Both reads see one snapshot: read apart, a delivery's state (in flight, its lease as the
  // next attempt) could be read before an attempt that ended meanwhile, and shown with it.
  const { rows, attempts } = await deps.db.transaction(async (tx) => {
    await tx.exec("set transaction isolation level repeatable read, read only");
    const rows = await deliveryList(tx, endpoint.id, parseCursor(req.cursor), limit + 1);
    const ids = rows.slice(0, limit).map((d) => d.id);
    return { rows, attempts: await attemptsOf(tx, ids, ATTEMPTS_SHOWN) };
  });
  const page = rows.slice(0, limit);
  const next = rows[limit];
  return {
    data: page.map((d) => ({
      id: d.id,
      eventType: d.eventType,
      status: d.status,
      createdAt: BigInt(d.createdAt),
      nextAttemptAt:
        d.status === "pending" && d.nextAttemptAt !== null ? BigInt(d.nextAttemptAt) : undefined,
      attempts: attempts
        .filter((a) => a.deliveryId === d.id)
        .map((a) => ({
          at: BigInt(a.at),
          status: a.status,
          responseStatus: a.responseStatus ?? undefined,
          latencyMs: BigInt(a.latencyMs),
          error: a.error ?? undefined,
          nextRetryAt: a.nextRetryAt === null ? undefined : BigInt(a.nextRetryAt),
        })),
    })),
    pagination: next
      ? { cursor: `${next.createdAt}:${next.id}`, hasMore: true }
      : { hasMore: false },
  };
}
