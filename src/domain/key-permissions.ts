/**
 * Matching of key permissions (the permissions a key holds, directly or through roles)
 * against a wanted permission name:
 *
 * - Names are `.`-separated segments; matching is case-sensitive and `:` is an ordinary
 *   character (`billing:read` is one segment).
 * - A held name ending in `.*` covers every name with that prefix and at least one more
 *   segment: `documents.*` covers `documents.read` and `documents.a.b`, not `documents`
 *   and not `documentsx.read`.
 * - Elsewhere a `*` segment matches exactly one segment: `a.*.c` covers `a.b.c`, not
 *   `a.b.x.c`; `*` alone covers every one-segment name (`admin`), not `documents.read`.
 * - A `*` inside a segment (`doc*`) is literal.
 */
export function keyPermissionCovers(held: string, wanted: string): boolean {
  if (held === wanted) return true;
  if (!held.includes("*")) return false;
  const h = held.split(".");
  const w = wanted.split(".");
  const trailing = h.length > 1 && h[h.length - 1] === "*";
  if (trailing ? w.length < h.length : w.length !== h.length) return false;
  const fixed = trailing ? h.length - 1 : h.length;
  for (let i = 0; i < fixed; i++) {
    if (h[i] !== "*" && h[i] !== w[i]) return false;
  }
  return true;
}

/** True when any held permission covers the wanted one. */
export function keyPermissionsAllow(held: readonly string[], wanted: string): boolean {
  for (const p of held) if (keyPermissionCovers(p, wanted)) return true;
  return false;
}
