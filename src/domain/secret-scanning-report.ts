/**
 * A secret-scanning partner's report (GitHub's shape): a JSON array of matches, each
 * `{token, type, url, source}`, and the answer to it: one `{token_raw, token_type, label}`
 * per match, in order, label `true_positive` when the token is a Latchkey key.
 */

/** One match of a report, its fields bounded. */
export interface ReportedMatch {
  token: string;
  type: string;
  /** Where it was found; "" when the partner gave none. */
  url: string;
  /** What kind of place (`content`, `commit`, `npm`, …); "unknown" when the partner gave none. */
  source: string;
}

/** The bounds of a report: a larger one is refused whole (400), before any lookup. */
export const REPORT_BOUNDS = {
  maxMatches: 1000,
  /** Longer than any key Latchkey issues (372) with room for migrated ones. */
  maxTokenLength: 1024,
  maxTypeLength: 256,
  maxUrlLength: 4096,
  maxSourceLength: 64,
} as const;

/** A field of a report that breaks its bounds: a JSON Pointer and what is wrong. */
export interface ReportViolation {
  location: string;
  message: string;
}

/** The answer for one match. */
export interface MatchLabel {
  token_raw: string;
  token_type: string;
  label: "true_positive" | "false_positive";
}

const FIELDS: ReadonlyArray<[keyof ReportedMatch, number, boolean]> = [
  ["token", REPORT_BOUNDS.maxTokenLength, true],
  ["type", REPORT_BOUNDS.maxTypeLength, false],
  ["url", REPORT_BOUNDS.maxUrlLength, false],
  ["source", REPORT_BOUNDS.maxSourceLength, false],
];

/**
 * The matches of a parsed report body, or every field that breaks the shape or a bound.
 * Fields beyond the four are ignored (a partner may add some); a missing type, url or
 * source reads as "", "" and "unknown".
 */
export function readReport(
  body: unknown,
): { matches: ReportedMatch[] } | { violations: ReportViolation[] } {
  if (!Array.isArray(body)) return { violations: [{ location: "", message: "must be an array" }] };
  if (body.length > REPORT_BOUNDS.maxMatches) {
    const message = `must have at most ${REPORT_BOUNDS.maxMatches} items`;
    return { violations: [{ location: "", message }] };
  }
  const violations: ReportViolation[] = [];
  const matches: ReportedMatch[] = [];
  for (const [i, item] of body.entries()) {
    if (item === null || typeof item !== "object" || Array.isArray(item)) {
      violations.push({ location: `/${i}`, message: "must be an object" });
      continue;
    }
    const match: ReportedMatch = { token: "", type: "", url: "", source: "unknown" };
    for (const [name, max, required] of FIELDS) {
      const value = (item as Record<string, unknown>)[name];
      const at = `/${i}/${name}`;
      if (value === undefined || value === null) {
        if (required) violations.push({ location: at, message: "is required" });
      } else if (typeof value !== "string") {
        violations.push({ location: at, message: "must be a string" });
      } else if (value.length > max) {
        violations.push({ location: at, message: `must be at most ${max} characters` });
      } else if (required && value.length === 0) {
        violations.push({ location: at, message: "must not be empty" });
      } else if (value !== "" || required) {
        match[name] = value;
      }
    }
    matches.push(match);
  }
  return violations.length > 0 ? { violations } : { matches };
}

/** The answer to a report: each match labelled by whether its token is a key (`found`). */
export function labelMatches(
  matches: readonly ReportedMatch[],
  found: (token: string) => boolean,
): MatchLabel[] {
  return matches.map((m) => ({
    token_raw: m.token,
    token_type: m.type,
    label: found(m.token) ? "true_positive" : "false_positive",
  }));
}
