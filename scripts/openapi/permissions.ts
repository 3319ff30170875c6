import type { AuthMode, ProcedureOptionValue } from "../../src/services/procedure-shape.ts";

/**
 * A template as the reference writes it: `api.{apiId}.read_api` → `` `api.<apiId>.read_api` ``,
 * in a code span, where Markdown renderers show `<apiId>` instead of taking it for HTML.
 */
function shown(template: string): string {
  return `\`${template.replace(/\{(\w+)\}/g, "<$1>")}\``;
}

/** `a`, `a and b`, `a, b and c`. */
function listed(items: readonly string[]): string {
  if (items.length <= 1) return items.join("");
  return `${items.slice(0, -1).join(", ")} and ${items.at(-1)}`;
}

/** The conditional permissions, those of one condition together: `x and y when roles …`. */
function cases(when: ProcedureOptionValue["when"]): string[] {
  const groups = new Map<string, string[]>();
  for (const w of when) {
    const group = groups.get(w.condition) ?? [];
    group.push(shown(w.permission));
    groups.set(w.condition, group);
  }
  return [...groups].map(([condition, permissions]) => `${listed(permissions)} when ${condition}`);
}

/**
 * The "Permission:" sentence of an operation, written from the rpc's procedure option, so
 * the reference shows exactly what the server checks; undefined for a procedure that checks
 * none (it needs no root key).
 */
export function permissionSentence(
  auth: AuthMode,
  option: ProcedureOptionValue,
): string | undefined {
  if (option.permissions.length === 0 && option.when.length === 0) return undefined;
  const head = auth === "optional" ? "Permission (with a root key):" : "Permission:";
  const base = listed(option.permissions.map(shown));
  const extra = cases(option.when);
  if (extra.length === 0) return `${head} ${base}.`;
  return `${head} ${base}${base === "" ? "" : ", plus "}${listed(extra)}.`;
}

/**
 * The row of a procedure in the root-key permission table of docs/root-keys-and-cli.md,
 * written from its procedure option like the reference's sentence.
 */
export function permissionRow(name: string, auth: AuthMode, option: ProcedureOptionValue): string {
  const sentence = permissionSentence(auth, option)
    ?.replace(/^Permission( \(with a root key\))?: /, "")
    .replace(/\.$/, "");
  const needs =
    sentence === undefined
      ? "none (no authentication)"
      : auth === "optional"
        ? `none needed; with a root key, ${sentence}`
        : sentence;
  return `| \`${name}\` | ${needs} |`;
}
