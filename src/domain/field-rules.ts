/**
 * The checks behind the bounds declared in proto/latchkey/v2/options.proto, as pure
 * functions: each returns the violation message, or undefined when the value is fine.
 */

/**
 * How many violations one answer lists. A request can break a bound in every item of a
 * long list; listing each would make the error many times larger than the request, and
 * the work to find them proportional to it. Collectors stop once they hold one more than
 * this (so the answer can say that more were left out) and the answer lists this many.
 */
export const MAX_VIOLATIONS = 25;

/** True when a collector of violations holds enough to answer: stop looking for more. */
export function violationsFull(found: readonly unknown[]): boolean {
  return found.length > MAX_VIOLATIONS;
}

/** Bounds of one string, as declared by FieldRules. */
export interface StringBounds {
  minLen?: number | undefined;
  maxLen?: number | undefined;
  pattern?: RegExp | undefined;
}

/** Bounds of one number. */
export interface NumberBounds {
  min?: number | undefined;
  max?: number | undefined;
}

/** Length of a string in Unicode code points (a surrogate pair counts once). */
export function codePointLength(s: string): number {
  let n = s.length;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        n--;
        i++;
      }
    }
  }
  return n;
}

// An unpaired surrogate: a high one not followed by a low one, or a low one not preceded by a high one.
const UNPAIRED_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * Checks that PostgreSQL can hold a string: text and jsonb refuse U+0000, and jsonb refuses
 * an unpaired surrogate (text would silently store U+FFFD instead). Such a string must be a
 * 400, not a failed statement: in a request it would be a 500, in an event a flush that
 * never succeeds.
 */
export function checkStorable(value: string): string | undefined {
  if (value.includes("\u0000")) return "must not contain the character U+0000";
  if (UNPAIRED_SURROGATE.test(value)) return "must be well-formed Unicode (no unpaired surrogate)";
  return undefined;
}

/**
 * Finds the first key or string in a JSON value that PostgreSQL cannot hold (see
 * checkStorable). Returns its JSON Pointer relative to `pointer` with the message, or undefined.
 */
export function findUnstorableString(
  value: unknown,
  pointer: string,
): { location: string; message: string } | undefined {
  if (typeof value === "string") {
    const message = checkStorable(value);
    return message === undefined ? undefined : { location: pointer, message };
  }
  if (value === null || typeof value !== "object") return undefined;
  const entries = Array.isArray(value)
    ? value.map((v, i) => [String(i), v] as const)
    : Object.entries(value);
  for (const [k, v] of entries) {
    const at = `${pointer}/${escapePointer(k)}`;
    const keyMessage = Array.isArray(value) ? undefined : checkStorable(k);
    if (keyMessage !== undefined) return { location: at, message: `has a key that ${keyMessage}` };
    const found = findUnstorableString(v, at);
    if (found !== undefined) return found;
  }
  return undefined;
}

/** Checks a string against its bounds; every string must also be storable (checkStorable). */
export function checkString(value: string, b: StringBounds): string | undefined {
  const unstorable = checkStorable(value);
  if (unstorable !== undefined) return unstorable;
  if (b.minLen !== undefined || b.maxLen !== undefined) {
    const len = codePointLength(value);
    if (b.minLen !== undefined && len < b.minLen) {
      return `must be at least ${b.minLen} character${b.minLen === 1 ? "" : "s"} long (got ${len})`;
    }
    if (b.maxLen !== undefined && len > b.maxLen) {
      return `must be at most ${b.maxLen} characters long (got ${len})`;
    }
  }
  if (b.pattern && !b.pattern.test(value)) return `must match the pattern ${b.pattern.source}`;
  return undefined;
}

/** Checks a number against its bounds; it must also be an integer when `integer` is set. */
export function checkNumber(value: number, b: NumberBounds, integer: boolean): string | undefined {
  if (!Number.isFinite(value)) return "must be a finite number";
  if (integer && !Number.isSafeInteger(value)) {
    return Number.isInteger(value)
      ? "must be an integer between -(2^53-1) and 2^53-1"
      : "must be an integer";
  }
  if (b.min !== undefined && value < b.min) return `must be at least ${b.min} (got ${value})`;
  if (b.max !== undefined && value > b.max) return `must be at most ${b.max} (got ${value})`;
  return undefined;
}

/** Checks the size of a list. */
export function checkItems(
  count: number,
  minItems?: number,
  maxItems?: number,
): string | undefined {
  if (minItems !== undefined && count < minItems) {
    return `must have at least ${minItems} item${minItems === 1 ? "" : "s"} (got ${count})`;
  }
  if (maxItems !== undefined && count > maxItems) {
    return `must have at most ${maxItems} items (got ${count})`;
  }
  return undefined;
}

/**
 * How deep a Struct (`meta`) may nest, the Struct itself being level 1. Every level is two
 * messages on the binary wire, where protobuf stops at 100 messages: much deeper, a value
 * stored through /v2 could not be read back by a gRPC or Connect client. A limit also keeps
 * the walks over the value (and PostgreSQL's jsonb parser) far from their stack limits.
 */
export const MAX_STRUCT_DEPTH = 32;

/**
 * Finds an object or array nested deeper than `maxDepth` levels in a JSON value (the value
 * itself is level 1) and returns its JSON Pointer relative to `pointer`, or undefined.
 * It never descends below `maxDepth`, so any depth is safe to check.
 */
export function findTooDeep(value: unknown, pointer: string, maxDepth: number): string | undefined {
  if (value === null || typeof value !== "object") return undefined;
  if (maxDepth <= 0) return pointer;
  const entries = Array.isArray(value)
    ? value.map((v, i) => [String(i), v] as const)
    : Object.entries(value);
  for (const [k, v] of entries) {
    const found = findTooDeep(v, `${pointer}/${escapePointer(k)}`, maxDepth - 1);
    if (found !== undefined) return found;
  }
  return undefined;
}

/**
 * Finds the first number in a JSON value that cannot be represented exactly
 * (an integer beyond 2^53-1, or a non-finite number). Returns its JSON Pointer
 * relative to `pointer`, or undefined.
 */
export function findUnsafeNumber(value: unknown, pointer: string): string | undefined {
  if (typeof value === "number") {
    if (!Number.isFinite(value)) return pointer;
    return Number.isInteger(value) && !Number.isSafeInteger(value) ? pointer : undefined;
  }
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = findUnsafeNumber(value[i], `${pointer}/${i}`);
      if (found !== undefined) return found;
    }
    return undefined;
  }
  if (value !== null && typeof value === "object") {
    for (const [k, v] of Object.entries(value)) {
      const found = findUnsafeNumber(v, `${pointer}/${escapePointer(k)}`);
      if (found !== undefined) return found;
    }
  }
  return undefined;
}

/** Escapes one JSON Pointer reference token (RFC 6901: `~` → `~0`, `/` → `~1`). */
export function escapePointer(token: string): string {
  if (!token.includes("~") && !token.includes("/")) return token;
  return token.replace(/~/g, "~0").replace(/\//g, "~1");
}
