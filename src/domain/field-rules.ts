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
  /** A format beyond the pattern (an address, a range): the violation message, or undefined. */
  format?: ((value: string) => string | undefined) | undefined;
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

/**
 * Length of a string in code points, or -1 when it holds an unpaired surrogate (a high one
 * not followed by a low one, or a low one not preceded by a high one). One pass that
 * allocates nothing: it runs for every string of a request, up to some 100,000 of them.
 */
function wellFormedLength(s: string): number {
  let n = s.length;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0xd800 || c > 0xdfff) continue;
    // A low surrogate reached here was not consumed as the second half of a pair.
    if (c >= 0xdc00) return -1;
    const d = s.charCodeAt(i + 1);
    if (!(d >= 0xdc00 && d <= 0xdfff)) return -1;
    n--;
    i++;
  }
  return n;
}

const NUL_MESSAGE = "must not contain the character U+0000";
const UNPAIRED_MESSAGE = "must be well-formed Unicode (no unpaired surrogate)";

/**
 * Checks that PostgreSQL can hold a string: text and jsonb refuse U+0000, and jsonb refuses
 * an unpaired surrogate (text would silently store U+FFFD instead). Such a string must be a
 * 400, not a failed statement: in a request it would be a 500, in an event a flush that
 * never succeeds.
 */
export function checkStorable(value: string): string | undefined {
  if (value.includes("\u0000")) return NUL_MESSAGE;
  if (wellFormedLength(value) < 0) return UNPAIRED_MESSAGE;
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
  const found = unstorableIn(value);
  return found && { location: pointer + found.suffix, message: found.message };
}

/**
 * The walks below allocate nothing for a value that passes: the pointer of what they find
 * is built on the way back up, one token per level. Built eagerly, it would be a string per
 * node of a value that can have some 500,000 of them (a 1 MiB body of tiny array items).
 */
function unstorableIn(value: unknown): { suffix: string; message: string } | undefined {
  if (typeof value === "string") {
    const message = checkStorable(value);
    return message === undefined ? undefined : { suffix: "", message };
  }
  if (value === null || typeof value !== "object") return undefined;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = unstorableIn(value[i]);
      if (found) return { suffix: `/${i}${found.suffix}`, message: found.message };
    }
    return undefined;
  }
  for (const k of Object.keys(value)) {
    const keyMessage = checkStorable(k);
    if (keyMessage !== undefined) {
      return { suffix: `/${escapePointer(k)}`, message: `has a key that ${keyMessage}` };
    }
    const found = unstorableIn((value as Record<string, unknown>)[k]);
    if (found) return { suffix: `/${escapePointer(k)}${found.suffix}`, message: found.message };
  }
  return undefined;
}

/** Checks a string against its bounds; every string must also be storable (checkStorable). */
export function checkString(value: string, b: StringBounds): string | undefined {
  if (value.includes("\u0000")) return NUL_MESSAGE;
  const len = wellFormedLength(value);
  if (len < 0) return UNPAIRED_MESSAGE;
  if (b.minLen !== undefined && len < b.minLen) {
    return `must be at least ${b.minLen} character${b.minLen === 1 ? "" : "s"} long (got ${len})`;
  }
  if (b.maxLen !== undefined && len > b.maxLen) {
    return `must be at most ${b.maxLen} characters long (got ${len})`;
  }
  if (b.pattern && !b.pattern.test(value)) return `must match the pattern ${b.pattern.source}`;
  return b.format?.(value);
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
  const suffix = tooDeepIn(value, maxDepth);
  return suffix === undefined ? undefined : pointer + suffix;
}

function tooDeepIn(value: unknown, maxDepth: number): string | undefined {
  if (value === null || typeof value !== "object") return undefined;
  if (maxDepth <= 0) return "";
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = tooDeepIn(value[i], maxDepth - 1);
      if (found !== undefined) return `/${i}${found}`;
    }
    return undefined;
  }
  for (const k of Object.keys(value)) {
    const found = tooDeepIn((value as Record<string, unknown>)[k], maxDepth - 1);
    if (found !== undefined) return `/${escapePointer(k)}${found}`;
  }
  return undefined;
}

/**
 * Finds the first number in a JSON value that cannot be represented exactly
 * (an integer beyond 2^53-1, or a non-finite number). Returns its JSON Pointer
 * relative to `pointer`, or undefined.
 */
export function findUnsafeNumber(value: unknown, pointer: string): string | undefined {
  const suffix = unsafeNumberIn(value);
  return suffix === undefined ? undefined : pointer + suffix;
}

function unsafeNumberIn(value: unknown): string | undefined {
  if (typeof value === "number") {
    if (!Number.isFinite(value)) return "";
    return Number.isInteger(value) && !Number.isSafeInteger(value) ? "" : undefined;
  }
  if (value === null || typeof value !== "object") return undefined;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = unsafeNumberIn(value[i]);
      if (found !== undefined) return `/${i}${found}`;
    }
    return undefined;
  }
  for (const k of Object.keys(value)) {
    const found = unsafeNumberIn((value as Record<string, unknown>)[k]);
    if (found !== undefined) return `/${escapePointer(k)}${found}`;
  }
  return undefined;
}

/** Escapes one JSON Pointer reference token (RFC 6901: `~` → `~0`, `/` → `~1`). */
export function escapePointer(token: string): string {
  if (!token.includes("~") && !token.includes("/")) return token;
  return token.replace(/~/g, "~0").replace(/\//g, "~1");
}
