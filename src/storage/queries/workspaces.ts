import type { Queryable } from "../db.js";

/** A workspace: every row of Latchkey belongs to exactly one. */
export interface WorkspaceRow {
  id: string;
  name: string;
  isDefault: boolean;
  createdAt: number;
}

const COLUMNS = `id, name, is_default as "isDefault", created_at as "createdAt"`;

/** Inserts a workspace. */
export async function workspaceInsert(q: Queryable, w: WorkspaceRow): Promise<void> {
  await q.query(
    `insert into workspaces (id, name, is_default, created_at)
     values ($1, $2, $3, $4)`,
    [w.id, w.name, w.isDefault, w.createdAt],
  );
}

/**
 * Returns the default workspace, creating it with `candidate` when there is none.
 * Safe when several processes run it at once: the partial unique index lets one insert win.
 */
export async function workspaceEnsureDefault(
  q: Queryable,
  candidate: Omit<WorkspaceRow, "isDefault">,
): Promise<WorkspaceRow> {
  await q.query(
    `insert into workspaces (id, name, is_default, created_at)
     values ($1, $2, true, $3)
     on conflict do nothing`,
    [candidate.id, candidate.name, candidate.createdAt],
  );
  const rows = await q.query<WorkspaceRow>(
    `select ${COLUMNS}
     from workspaces
     where is_default`,
  );
  const row = rows[0];
  if (!row) throw new Error("default workspace missing after insert");
  return row;
}

/** Finds a live workspace by id. */
export async function workspaceFindById(
  q: Queryable,
  id: string,
): Promise<WorkspaceRow | undefined> {
  const rows = await q.query<WorkspaceRow>(
    `select ${COLUMNS}
     from workspaces
     where id = $1
       and deleted_at is null`,
    [id],
  );
  return rows[0];
}

/** Lists live workspaces by id. */
export async function workspaceList(q: Queryable): Promise<WorkspaceRow[]> {
  return q.query<WorkspaceRow>(
    `select ${COLUMNS}
     from workspaces
     where deleted_at is null
     order by id`,
  );
}

/** The id of the only live workspace, or undefined when there are several (or none). */
export async function workspaceSole(q: Queryable): Promise<string | undefined> {
  const rows = await q.query<{ id: string }>(
    `select id
     from workspaces
     where deleted_at is null
     limit 2`,
  );
  return rows.length === 1 ? rows[0]?.id : undefined;
}
