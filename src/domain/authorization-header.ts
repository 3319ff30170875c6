/** The outcome of reading an Authorization header. */
export type BearerToken =
  | { kind: "missing" }
  | { kind: "malformed" }
  | { kind: "token"; token: string };

/**
 * Reads `Authorization: Bearer <token>`. The scheme is case-sensitive, as in the
 * public system; surrounding whitespace of the header and the token is ignored.
 */
export function parseBearer(header: string | null | undefined): BearerToken {
  if (header === null || header === undefined || header.trim() === "") return { kind: "missing" };
  const value = header.trim();
  if (!value.startsWith("Bearer ")) return { kind: "malformed" };
  const token = value.slice("Bearer ".length).trim();
  if (token === "") return { kind: "malformed" };
  return { kind: "token", token };
}
