import type { TestServer } from "../../harness/server.js";

let n = 0;

/**
 * A namespace that exists, created the way callers create one: by a first ratelimit.limit
 * call (cost 0, so no counter moves). The override procedures never create namespaces.
 */
export async function newNamespace(s: TestServer): Promise<{ name: string; id: string }> {
  const name = `ovr.${++n}`;
  await s.api.ratelimit.limit({
    namespace: name,
    identifier: "seed",
    limit: 1n,
    duration: 1000n,
    cost: 0n,
  });
  const rows = await s.db.query<{ id: string }>(
    "select id from ratelimit_namespaces where name = $1",
    [name],
  );
  return { name, id: rows[0]?.id as string };
}

/** The audit events recorded about one resource, oldest first. */
export async function auditEventsOf(s: TestServer, resourceId: string): Promise<string[]> {
  const rows = await s.db.query<{ event: string }>(
    "select event from audit_logs where resource_id = $1 order by id",
    [resourceId],
  );
  return rows.map((r) => r.event);
}
