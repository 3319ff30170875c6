import { slices } from "../batches.js";
import type { Queryable } from "../db.js";

/** One audit record: who changed what, when, in which request. */
export interface AuditEntry {
  workspaceId: string;
  time: number;
  /** Event name (the public system's names), for example `api.create`. */
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

/**
 * Appends audit records, in their order (ids ascend with it), a slice per statement; call it
 * in the transaction of the change it describes.
 */
export async function auditInsert(q: Queryable, entries: readonly AuditEntry[]): Promise<void> {
  for (const part of slices(entries)) {
    const column = <K extends keyof AuditEntry>(k: K) => part.map((e) => e[k]);
    await q.query(
      `insert into audit_logs (workspace_id, time, event, actor_type, actor_id, resource_type,
         resource_id, description, request_id, correlation_id)
       select workspace_id, time::int8, event, actor_type, actor_id, resource_type, resource_id,
         description, request_id, correlation_id
       from unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[],
         $7::text[], $8::text[], $9::text[], $10::text[]) with ordinality
         as t(workspace_id, time, event, actor_type, actor_id, resource_type, resource_id,
           description, request_id, correlation_id, n)
       order by n`,
      [
        column("workspaceId"),
        // As text: the drivers would not bind an array of numbers typed.
        column("time").map(String),
        column("event"),
        column("actorType"),
        column("actorId"),
        column("resourceType"),
        column("resourceId"),
        column("description"),
        column("requestId"),
        column("correlationId"),
      ],
    );
  }
}

/** Filters of an audit-log page; every one optional. */
export interface AuditFilter {
  startMs?: number;
  endMs?: number;
  actorId?: string;
  event?: string;
  resourceType?: string;
  resourceId?: string;
  /** Only records with an id at most this (the previous page's cursor). */
  beforeOrAtId?: number;
}

/** A stored audit record. */
export interface AuditRecord {
  id: number;
  time: number;
  event: string;
  actorType: string;
  actorId: string;
  resourceType: string;
  resourceId: string;
  description: string;
  requestId: string | null;
  correlationId: string | null;
}

/** A workspace's audit records, newest first, `limit` of them. */
export async function auditList(
  q: Queryable,
  workspaceId: string,
  f: AuditFilter,
  limit: number,
): Promise<AuditRecord[]> {
  return q.query<AuditRecord>(
    `select id, time, event, actor_type as "actorType", actor_id as "actorId",
       resource_type as "resourceType", resource_id as "resourceId", description,
       request_id as "requestId", correlation_id as "correlationId"
     from audit_logs
     where workspace_id = $1
       and ($2::bigint is null or time >= $2)
       and ($3::bigint is null or time < $3)
       and ($4::text is null or actor_id = $4)
       and ($5::text is null or event = $5)
       and ($6::text is null or resource_type = $6)
       and ($7::text is null or resource_id = $7)
       and ($8::bigint is null or id <= $8)
     order by id desc
     limit $9`,
    [
      workspaceId,
      f.startMs ?? null,
      f.endMs ?? null,
      f.actorId ?? null,
      f.event ?? null,
      f.resourceType ?? null,
      f.resourceId ?? null,
      f.beforeOrAtId ?? null,
      limit,
    ],
  );
}
