import { type Writer, writeLine } from "./io.js";

/**
 * Prints rows as tab-separated lines under a header line: readable in a terminal, and
 * `cut -f` or `awk -F'\t'` read it. Tabs and newlines inside a value (a name may hold
 * them) become spaces, and an empty value prints as `-`, so columns stay countable.
 */
export function printTable(to: Writer, header: string[], rows: string[][]): void {
  const line = (cells: string[]) =>
    cells.map((c) => (c === "" ? "-" : c.replace(/[\t\r\n]/g, " "))).join("\t");
  writeLine(to, [header, ...rows].map(line).join("\n"));
}

/** A stored time (ms since the epoch) as ISO 8601, to the second. */
export function timestamp(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z");
}
