/**
 * Fields of COPY ... WITH (format csv) rows. Every text is quoted, so an empty string stays
 * an empty string and only an unquoted empty field is NULL; quotes inside are doubled, and a
 * quoted field may hold commas, newlines and a lone `\.` line. PostgreSQL text cannot hold
 * U+0000: requests with one are refused at validation, and one that got this far would make
 * every retry of its batch fail, so it is written as U+FFFD instead.
 */

/** A text field, NULL for null. It runs once per field of every event: ids need no escaping. */
export function csvText(s: string | null): string {
  if (s === null) return "";
  if (!s.includes('"') && !s.includes("\u0000")) return `"${s}"`;
  return `"${s.replaceAll('"', '""').replaceAll("\u0000", "\uFFFD")}"`;
}

/** A text[] field: a PostgreSQL array literal with every element quoted, itself quoted. */
export function csvTextArray(items: readonly string[]): string {
  if (items.length === 0) return '"{}"';
  const elements = items.map((t) => `"${t.replaceAll("\\", "\\\\").replaceAll('"', '\\"')}"`);
  return csvText(`{${elements.join(",")}}`);
}

/** An integer field (bigint columns), NULL for null. */
export function csvInteger(n: number | null): string {
  return n === null ? "" : String(n);
}

/** A boolean field. */
export function csvBoolean(b: boolean): string {
  return b ? "t" : "f";
}
