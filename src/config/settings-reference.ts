import type { Setting } from "./parsers.js";
import { flagOf, SETTINGS } from "./settings.js";

// docs/configuration.md's reference of settings is written from the settings table, so the
// page cannot drift from what a start reads: `npm run docs:settings` rewrites it, and a unit
// test fails while it is out of date.

/** The markers around the generated section of docs/configuration.md. */
export const REFERENCE_START =
  "<!-- settings reference: generated from src/config/settings.ts by npm run docs:settings -->";
export const REFERENCE_END = "<!-- end of settings reference -->";

/** A table cell: a `|` in the text would end it. */
function cell(text: string): string {
  return text.replaceAll("|", "\\|");
}

function row(s: Setting<unknown>): string {
  const shown = s.shownDefault === "(unset)" ? "(unset)" : `\`${s.shownDefault}\``;
  const secret = s.secret ? "; secret: prefer the variable to the flag (flags show in `ps`)" : "";
  return `| \`${s.env}\` | \`--${flagOf(s)}\` | ${shown} | ${cell(s.accepts ?? "any text")} | ${cell(s.doc ?? s.help)}${secret} |`;
}

/** The generated section, markers included. */
export function settingsReference(): string {
  const rows = Object.values(SETTINGS).map((s) => row(s as Setting<unknown>));
  return [
    REFERENCE_START,
    "| variable | flag | default | accepts | meaning |",
    "| --- | --- | --- | --- | --- |",
    ...rows,
    REFERENCE_END,
  ].join("\n");
}

/** `page` with its generated section replaced by `section`; undefined without the markers. */
export function withReference(page: string, section: string): string | undefined {
  const from = page.indexOf(REFERENCE_START);
  const to = page.indexOf(REFERENCE_END);
  if (from === -1 || to < from) return undefined;
  return page.slice(0, from) + section + page.slice(to + REFERENCE_END.length);
}
