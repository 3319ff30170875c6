import type { Queryable } from "../db.js";

/** The column each table is named by (a permission's name is its slug). */
const NAME_COLUMN = { roles: "name", ratelimit_namespaces: "name", permissions: "slug" } as const;

/**
 * The row of `table` in the workspace whose id is `idOrName`, else the one with that name (an
 * id wins when a name happens to equal another row's id). `table` and `columns` are constants
 * of the calling module, never input.
 */
export async function findByIdOrName<T>(
  q: Queryable,
  table: keyof typeof NAME_COLUMN,
  columns: string,
  workspaceId: string,
  idOrName: string,
): Promise<T | undefined> {
  const rows = await q.query<T>(
    `select ${columns}
     from ${table}
     where workspace_id = $1
       and (id = $2 or ${NAME_COLUMN[table]} = $2)
     order by (id = $2) desc
     limit 1`,
    [workspaceId, idOrName],
  );
  return rows[0];
}
