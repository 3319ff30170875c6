import type { Queryable } from "../db.js";

/** One audit record: who changed what, when, in which request. */
export interface AuditEntry {
  workspaceId: string;
  time: number;
  /** Event name of reference §8, for example `api.create`. */
  event: string;
  actorType: "rootkey" | "system" | "cli";
  actorId: string;
  resourceType: string;
  resourceId: string;
  description: string;
  requestId: string | null;
  /** Shared by the records of one multi-event operation. */
  correlationId: string | null;
}

/** Appends audit records; call it in the transaction of the change it describes. */
export async function auditInsert(q: Queryable, entries: readonly AuditEntry[]): Promise<void> {
  for (const e of entries) {
    await q.query(
      `insert into audit_logs (workspace_id, time, event, actor_type, actor_id, resource_type,
         resource_id, description, request_id, correlation_id)
       values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
      [
        e.workspaceId,
        e.time,
        e.event,
        e.actorType,
        e.actorId,
        e.resourceType,
        e.resourceId,
        e.description,
        e.requestId,
        e.correlationId,
      ],
    );
  }
}
