import { keyPermissionsAllow } from "./key-permissions.js";

/**
 * The permissions query of keys.verifyKey: permission names joined by AND and OR
 * (case-insensitive whole words) with parentheses; AND binds tighter than OR.
 *
 *   query   := or
 *   or      := and ( OR and )*
 *   and     := primary ( AND primary )*
 *   primary := NAME | "(" or ")"
 *
 * A name is made of letters, digits and . _ - * : / (and any non-ASCII letter).
 * Positions in errors are 0-based offsets in bytes of the query's UTF-8 form, as the
 * reference reports them (they differ from string indices after a non-ASCII character).
 */
export type Query = { kind: "name"; name: string } | { kind: "and" | "or"; items: Query[] };

/** A query that cannot be parsed, with the offset (UTF-8 bytes) of the problem. */
export class QuerySyntaxError extends Error {
  override name = "QuerySyntaxError";
  constructor(
    message: string,
    readonly position: number,
  ) {
    super(message);
  }
}

type Token =
  | { kind: "name"; text: string; at: number }
  | { kind: "and" | "or"; text: string; at: number }
  | { kind: "(" | ")"; text: string; at: number };

function isNameChar(c: string): boolean {
  return /[A-Za-z0-9._\-*:/]/.test(c) || c.charCodeAt(0) > 127;
}

/** The UTF-8 byte offset of the string index `i` of `query` (only computed for an error). */
function byteOffset(query: string, i: number): number {
  return new TextEncoder().encode(query.slice(0, i)).length;
}

function tokenize(query: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < query.length) {
    const c = query[i] as string;
    if (c === " " || c === "\t" || c === "\r" || c === "\n") {
      i++;
    } else if (c === "(" || c === ")") {
      tokens.push({ kind: c, text: c, at: i });
      i++;
    } else if (isNameChar(c)) {
      const start = i;
      while (i < query.length && isNameChar(query[i] as string)) i++;
      const text = query.slice(start, i);
      const upper = text.toUpperCase();
      if (upper === "AND" || upper === "OR")
        tokens.push({ kind: upper === "AND" ? "and" : "or", text, at: start });
      else tokens.push({ kind: "name", text, at: start });
    } else {
      const at = byteOffset(query, i);
      throw new QuerySyntaxError(`Invalid character '${c}' at position ${at}.`, at);
    }
  }
  return tokens;
}

/** Parses a permissions query; throws QuerySyntaxError with the position of the problem. */
export function parseQuery(query: string): Query {
  const tokens = tokenize(query);
  if (tokens.length === 0) {
    throw new QuerySyntaxError(
      "Unexpected end of input. Please provide a valid permission query.",
      0,
    );
  }
  let pos = 0;
  const peek = () => tokens[pos];
  const end = () => byteOffset(query, query.length);
  const expected = (t: Token | undefined): never => {
    if (!t) {
      throw new QuerySyntaxError(
        "Unexpected end of query. Expected a permission identifier or opening parenthesis.",
        end(),
      );
    }
    const at = byteOffset(query, t.at);
    throw new QuerySyntaxError(
      `Unexpected token '${t.text}' at position ${at}. Expected a permission identifier or opening parenthesis.`,
      at,
    );
  };

  function primary(): Query {
    const t = peek();
    if (t?.kind === "name") {
      pos++;
      return { kind: "name", name: t.text };
    }
    if (t?.kind === "(") {
      pos++;
      const close = peek();
      if (close?.kind === ")") {
        // Where the parser finds it empty: the closing parenthesis (as the reference reports).
        const at = byteOffset(query, close.at);
        throw new QuerySyntaxError(
          `Empty parentheses found at position ${at}. Parentheses must contain at least one permission or expression.`,
          at,
        );
      }
      const inner = or();
      if (peek()?.kind !== ")") {
        const next = peek();
        const at = next ? byteOffset(query, next.at) : end();
        throw new QuerySyntaxError(
          `Missing closing parenthesis ')' at position ${at}. Every opening parenthesis must have a matching closing parenthesis.`,
          at,
        );
      }
      pos++;
      return inner;
    }
    return expected(t);
  }

  function chain(kind: "and" | "or", next: () => Query): Query {
    const items = [next()];
    while (peek()?.kind === kind) {
      pos++;
      items.push(next());
    }
    return items.length === 1 ? (items[0] as Query) : { kind, items };
  }

  const and = () => chain("and", primary);
  const or = (): Query => chain("or", and);

  const result = or();
  const rest = peek();
  if (rest) {
    const at = byteOffset(query, rest.at);
    throw new QuerySyntaxError(
      `Unexpected token '${rest.text}' at position ${at}. The query appears to have extra content after a valid expression.`,
      at,
    );
  }
  return result;
}

/** True when a key holding `held` satisfies the query (leaves match by the wildcard rule). */
export function satisfies(query: Query, held: readonly string[]): boolean {
  switch (query.kind) {
    case "name":
      return keyPermissionsAllow(held, query.name);
    case "and":
      return query.items.every((q) => satisfies(q, held));
    case "or":
      return query.items.some((q) => satisfies(q, held));
  }
}
