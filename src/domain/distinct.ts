/**
 * The distinct values of a request's list, in first-seen order: naming a permission, role
 * or external id twice in one request means the same as naming it once.
 */
export function distinct<T>(values: readonly T[]): T[] {
  return [...new Set(values)];
}
