import type { Queryable } from "../db.js";

/**
 * The row of `table` in the workspace whose id is `idOrName`, else the one with that name (an
 * id wins when a name happens to equal another row's id). `table` and `columns` are constants
 * of the calling module, never input.
 */
export async function findByIdOrName<T>(
  q: Queryable,
  table: "roles" | "ratelimit_namespaces",
  columns: string,
  workspaceId: string,
  idOrName: string,
): Promise<T | undefined> {
  const rows = await q.query<T>(
    `select ${columns}
     from ${table}
     where workspace_id = $1
       and (id = $2 or name = $2)
     order by (id = $2) desc
     limit 1`,
    [workspaceId, idOrName],
  );
  return rows[0];
}
