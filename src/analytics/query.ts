import { guardQuery, type ParsedQuery, QueryRefused } from "../domain/analytics/sql-guard.js";

type Parser = typeof import("libpg-query");

let parser: Parser | undefined;
let loading: Promise<void> | undefined;

/**
 * Loads PostgreSQL's parser (WebAssembly) once, on the first analytics query rather than at
 * start: a server that is never asked one never pays for it (its module and memory keep
 * ~40 MB resident, and V8's optimising compile of the parser's largest function briefly
 * takes ~600 MB). A failed load is tried again on the next call.
 */
export function loadQueryParser(): Promise<void> {
  loading ??= import("libpg-query")
    .then(async (lib) => {
      await lib.loadModule();
      parser = lib;
    })
    .catch((err: unknown) => {
      loading = undefined;
      throw err;
    });
  return loading;
}

/** The loaded parser; `loadQueryParser()` must have resolved first. */
function loaded(): Parser {
  if (!parser) throw new Error("the query parser is not loaded: await loadQueryParser() first");
  return parser;
}

/** A query that passed the guard. */
export interface CheckedQuery {
  /** The statement's own text (without a trailing semicolon). */
  text: string;
  /** The virtual tables it reads. */
  tables: Set<string>;
  /** Whether it has a WITH RECURSIVE (which may never end). */
  recursive: boolean;
  /** Its parse tree without positions, to recognise it inside the statement that runs it. */
  tree: string;
}

/**
 * Parses a query with PostgreSQL's own parser and checks it with the guard. Syntax errors
 * are refused with PostgreSQL's message and position. Needs `loadQueryParser()` first.
 */
export function checkQuery(sql: string): CheckedQuery {
  const parsed = parse(sql);
  const { tables, recursive } = guardQuery(parsed, loaded().scanSync(sql).tokens);
  const stmt = parsed.stmts?.[0];
  // Positions are byte offsets into the UTF-8 text.
  const bytes = Buffer.from(sql, "utf8");
  const from = stmt?.stmt_location ?? 0;
  const to = stmt?.stmt_len ? from + stmt.stmt_len : bytes.length;
  return {
    text: bytes.subarray(from, to).toString("utf8"),
    tables,
    recursive,
    tree: withoutPositions(stmt?.stmt),
  };
}

/**
 * Confirms that `statement` (what will run) is one SELECT over exactly the checked query as a
 * sub-select named `latchkey_row`, so no text of the query can have escaped its parentheses.
 */
export function confirmWrapped(statement: string, checked: CheckedQuery): void {
  const parsed = parse(statement);
  // biome-ignore lint/suspicious/noExplicitAny: parse trees are untyped JSON
  const top = parsed.stmts?.length === 1 ? (parsed.stmts[0]?.stmt as any)?.SelectStmt : undefined;
  const from = top?.fromClause;
  const sub = from?.length === 1 ? from[0]?.RangeSubselect : undefined;
  if (sub?.alias?.aliasname !== "latchkey_row" || withoutPositions(sub.subquery) !== checked.tree)
    throw new QueryRefused("query", "The query could not be isolated; simplify it.");
}

function parse(sql: string): ParsedQuery {
  const lib = loaded();
  try {
    return lib.parseSync(sql) as ParsedQuery;
  } catch (err) {
    const details = (err as { sqlDetails?: { cursorPosition?: number } }).sqlDetails;
    const at =
      details?.cursorPosition !== undefined ? ` at position ${details.cursorPosition}` : "";
    throw new QueryRefused("query", `${(err as Error).message}${at}.`);
  }
}

/**
 * The fields of PostgreSQL's parse tree that hold byte offsets into the text parsed: the
 * same query parsed alone and inside the wrapping statement differs only in these. Every
 * node has `location`; an IN list and an ARRAY[...] also record where their list starts and
 * ends. A position field missing here makes every query using that node fail the wrapping
 * check (refused, never let through).
 */
const POSITION_FIELDS: ReadonlySet<string> = new Set([
  "location",
  "list_start",
  "list_end",
  "rexpr_list_start",
  "rexpr_list_end",
  "name_location",
]);

function withoutPositions(tree: unknown): string {
  return JSON.stringify(tree, (k, v) => (POSITION_FIELDS.has(k) ? undefined : v));
}
