import type { MessageInitShape } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import type {
  ListAuditLogsRequest,
  ListAuditLogsResponseSchema,
} from "../../../gen/latchkey/v2/analytics_pb.js";
import { errors } from "../../errors/service-error.js";
import { type AuditRecord, auditList } from "../../storage/queries/audit-logs.js";
import { authorize } from "../auth.js";
import { principalOf } from "../call.js";
import type { Deps } from "../deps.js";
import { pageSize, toPage } from "../pagination.js";

/** One page of the workspace's audit log, newest first, filtered. */
export async function listAuditLogs(
  deps: Deps,
  req: ListAuditLogsRequest,
  ctx: HandlerContext,
): Promise<MessageInitShape<typeof ListAuditLogsResponseSchema>> {
  authorize(ctx);
  if (req.cursor !== undefined && !/^\d{1,18}$/.test(req.cursor))
    throw errors.badField("/cursor", "must be the cursor of a previous page");
  const limit = pageSize(req.limit);
  const rows = await auditList(
    deps.db,
    principalOf(ctx).workspaceId,
    {
      startMs: req.start === undefined ? undefined : Number(req.start),
      endMs: req.end === undefined ? undefined : Number(req.end),
      actorId: req.actorId,
      event: req.event,
      resourceType: req.resourceType,
      resourceId: req.resourceId,
      beforeOrAtId: req.cursor === undefined ? undefined : Number(req.cursor),
    },
    limit + 1,
  );
  const { items, pagination } = toPage(
    rows.map((r) => ({ ...r, id: String(r.id) })),
    limit,
  );
  return { data: items.map(toMessage), pagination };
}

function toMessage(r: Omit<AuditRecord, "id"> & { id: string }) {
  return {
    id: r.id,
    time: BigInt(r.time),
    event: r.event,
    actor: { type: r.actorType, id: r.actorId },
    resource: { type: r.resourceType, id: r.resourceId },
    description: r.description,
    ...(r.requestId !== null ? { requestId: r.requestId } : {}),
    ...(r.correlationId !== null ? { correlationId: r.correlationId } : {}),
  };
}
