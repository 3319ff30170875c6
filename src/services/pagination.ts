/** Page size when a list request gives none (reference: 100). */
export const DEFAULT_PAGE_SIZE = 100;

/** The page size of a list request. */
export function pageSize(limit: number | undefined): number {
  return limit ?? DEFAULT_PAGE_SIZE;
}

/** A search term: trimmed; blank means no filter. */
export function searchTerm(search: string | undefined): string | undefined {
  const t = search?.trim();
  return t ? t : undefined;
}

/**
 * Cuts `rows` (fetched with `limit + 1`, ordered by id, from the cursor on) into a page.
 * The cursor is the id of the first row of the next page; any string is a valid cursor
 * (it is a lower bound on ids), so a stale or made-up cursor yields a page, not an error.
 */
export function toPage<T extends { id: string }>(
  rows: readonly T[],
  limit: number,
): { items: T[]; pagination: { cursor?: string; hasMore: boolean } } {
  if (rows.length <= limit) return { items: [...rows], pagination: { hasMore: false } };
  return {
    items: rows.slice(0, limit),
    pagination: { cursor: (rows[limit] as T).id, hasMore: true },
  };
}
