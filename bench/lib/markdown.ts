// Markdown for the generated sections of docs/benchmarks.md.

export type Cell = string | number | null | undefined;

/** A number with thousands separators ("–" when missing). */
export function num(x: number | null | undefined, digits = 2): string {
  if (x === null || x === undefined || !Number.isFinite(x)) return "–";
  return x.toLocaleString("en-US", { maximumFractionDigits: digits });
}

/** "1.23 ms": at most `digits` decimals, fewer as the value grows (3 significant or so). */
export function ms(x: number | null | undefined, digits = 2): string {
  if (x === null || x === undefined) return "–";
  const a = Math.abs(x);
  const significant = a >= 100 ? 0 : a >= 10 ? 1 : a >= 1 ? 2 : 3;
  return `${num(x, Math.min(digits, significant))} ms`;
}

/** A table; columns whose header ends with ":" are right-aligned (the colon is dropped). */
export function table(headers: string[], rows: Cell[][]): string {
  const right = headers.map((h) => h.endsWith(":"));
  const head = headers.map((h) => (h.endsWith(":") ? h.slice(0, -1) : h));
  const cell = (c: Cell) =>
    typeof c === "number" ? num(c) : c === null || c === undefined ? "–" : c.replaceAll("|", "\\|");
  const lines = [
    `| ${head.join(" | ")} |`,
    `| ${right.map((r) => (r ? "---:" : "---")).join(" | ")} |`,
    ...rows.map((r) => `| ${r.map(cell).join(" | ")} |`),
  ];
  return lines.join("\n");
}

/** "met" / "missed" against a target. */
export const verdict = (met: boolean | null | undefined) =>
  met === null || met === undefined ? "–" : met ? "met" : "**missed**";
