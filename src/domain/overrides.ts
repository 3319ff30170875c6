/** A rate-limit override: a different limit and window for matching identifiers. */
export interface Override {
  id: string;
  /** The identifier it applies to; `*` matches any sequence of characters (also none). */
  identifier: string;
  limit: number;
  durationMs: number;
  createdAt: number;
}

/** True when a pattern with `*` wildcards matches the whole identifier. */
export function wildcardMatches(pattern: string, identifier: string): boolean {
  if (!pattern.includes("*")) return pattern === identifier;
  const parts = pattern.split("*");
  const first = parts[0] as string;
  const last = parts[parts.length - 1] as string;
  if (!identifier.startsWith(first)) return false;
  let at = first.length;
  for (let i = 1; i < parts.length - 1; i++) {
    const part = parts[i] as string;
    const found = identifier.indexOf(part, at);
    if (found < 0) return false;
    at = found + part.length;
  }
  return identifier.length - at >= last.length && identifier.endsWith(last);
}

/** How specific a pattern is: its literal characters (wildcards do not count). */
function specificity(pattern: string): number {
  return pattern.length - pattern.split("*").length + 1;
}

/**
 * The override for an identifier: an exact match first, else
 * the most specific matching wildcard pattern (most literal characters), ties going to the
 * oldest override. Undefined when none matches.
 */
export function matchOverride<T extends Override>(
  overrides: readonly T[],
  identifier: string,
): T | undefined {
  let best: T | undefined;
  for (const o of overrides) {
    if (o.identifier === identifier) return o;
    if (!o.identifier.includes("*") || !wildcardMatches(o.identifier, identifier)) continue;
    if (
      !best ||
      specificity(o.identifier) > specificity(best.identifier) ||
      (specificity(o.identifier) === specificity(best.identifier) &&
        (o.createdAt < best.createdAt || (o.createdAt === best.createdAt && o.id < best.id)))
    ) {
      best = o;
    }
  }
  return best;
}
