/**
 * Rows one multi-row statement writes at most. A request may legitimately write a lot (a
 * migration of 100 keys with 1,000 permissions each is 100,000 grants and as many audit
 * records): one statement per row costs a round trip each and held a connection for tens of
 * seconds; one statement for everything would build one huge parameter array and run as long
 * as the statement timeout allows. Slices of this size keep each statement short.
 */
export const ROWS_PER_STATEMENT = 1_000;

/** `list` in consecutive slices of at most `size` items (none for an empty list). */
export function slices<T>(list: readonly T[], size: number = ROWS_PER_STATEMENT): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < list.length; i += size) out.push(list.slice(i, i + size));
  return out;
}
