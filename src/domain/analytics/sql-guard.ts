import {
  ALLOWED_EXPRESSION_KINDS,
  ALLOWED_FUNCTIONS,
  ALLOWED_OPERATORS,
  ALLOWED_TYPES,
  ALLOWED_VALUE_FUNCTIONS,
  PLAIN_NODES,
  QUERY_LIMITS,
} from "./allow-lists.js";
import { VIRTUAL_TABLES } from "./tables.js";

/** Why a query was refused; each maps to one error code of the catalog. */
export type RefusalKind = "query" | "query_type" | "table" | "function";

/** A query the guard refuses, with a message naming what is not allowed. */
export class QueryRefused extends Error {
  constructor(
    readonly kind: RefusalKind,
    message: string,
  ) {
    super(message);
  }
}

/** The parse result of libpg-query, as plain JSON. */
export interface ParsedQuery {
  stmts?: { stmt?: unknown; stmt_location?: number; stmt_len?: number }[];
}

/** One token of libpg-query's scanner. */
export interface ScannedToken {
  text: string;
}

// biome-ignore lint/suspicious/noExplicitAny: parse trees are untyped JSON walked by shape
type Json = any;

/**
 * Checks a parsed query against the allow-lists: exactly one SELECT (no INTO, no locking,
 * CTEs only of SELECTs), tables only the virtual tables or CTEs in scope (PostgreSQL's
 * scoping rules, so a CTE cannot be used to reach a real table of the same name), functions,
 * operators and casts from the allow-lists, no parameters, no Unicode escapes. Anything the
 * guard does not know is refused. Returns the virtual tables the query reads and whether it
 * has a recursive CTE (which may never end: refused where a query cannot be interrupted).
 */
export function guardQuery(
  parsed: ParsedQuery,
  tokens: readonly ScannedToken[],
): { tables: Set<string>; recursive: boolean } {
  for (const t of tokens) {
    if (/^u&/i.test(t.text)) throw refuse("query", "Unicode escapes (U&'...') are not allowed.");
  }
  const stmts = parsed.stmts ?? [];
  if (stmts.length !== 1)
    throw refuse("query_type", `Send exactly one statement; this query has ${stmts.length}.`);
  const top = stmts[0]?.stmt as Json;
  if (!top || typeof top !== "object" || !("SelectStmt" in top))
    throw refuse("query_type", `Only SELECT is allowed, not ${statementName(top)}.`);
  const walker = new Walker();
  const select = top.SelectStmt;
  const columns = select.targetList?.length ?? 0;
  if (columns > QUERY_LIMITS.maxColumns)
    throw refuse("query", `At most ${QUERY_LIMITS.maxColumns} columns may be selected.`);
  walker.select(select, new Scope(null, []));
  return { tables: walker.tables, recursive: walker.recursive };
}

function refuse(kind: RefusalKind, message: string): QueryRefused {
  return new QueryRefused(kind, message);
}

function statementName(node: Json): string {
  const name = node && typeof node === "object" ? Object.keys(node)[0] : undefined;
  return name ? name.replace(/Stmt$/, "").toUpperCase() : "an empty statement";
}

/** The CTE names visible at one point of the query, innermost first. */
class Scope {
  constructor(
    private readonly parent: Scope | null,
    private readonly names: readonly string[],
  ) {}
  has(name: string): boolean {
    return this.names.includes(name) || (this.parent?.has(name) ?? false);
  }
  with(names: readonly string[]): Scope {
    return new Scope(this, names);
  }
}

class Walker {
  readonly tables = new Set<string>();
  recursive = false;
  private nodes = 0;
  private depth = 0;

  /** A SELECT (also the arms of UNION / INTERSECT / EXCEPT, which arrive unwrapped). */
  select(s: Json, outer: Scope): void {
    this.count();
    if (s.intoClause) throw refuse("query_type", "SELECT INTO writes a table; it is not allowed.");
    if (s.lockingClause)
      throw refuse("query", "Locking clauses (FOR UPDATE / FOR SHARE) are not allowed.");
    const scope = s.withClause ? this.withClause(s.withClause, outer) : outer;
    for (const [field, value] of Object.entries(s)) {
      if (field === "withClause") continue;
      if (field === "larg" || field === "rarg") this.select(value, scope);
      else this.walk(value, scope);
    }
  }

  /**
   * CTE bodies see the CTEs before them (all of them with RECURSIVE), as PostgreSQL scopes
   * them; the statement sees all. Only SELECT bodies: a CTE that writes is refused.
   */
  private withClause(w: Json, outer: Scope): Scope {
    const ctes: Json[] = (w.ctes ?? []).map((c: Json) => {
      if (!c?.CommonTableExpr) throw refuse("query", "Unexpected WITH item.");
      return c.CommonTableExpr;
    });
    const names = ctes.map((c) => String(c.ctename));
    if (w.recursive) this.recursive = true;
    ctes.forEach((c, i) => {
      this.count();
      const visible = w.recursive ? names : names.slice(0, i);
      const body = c.ctequery;
      if (!body?.SelectStmt)
        throw refuse(
          "query_type",
          `WITH ${c.ctename} must be a SELECT, not ${statementName(body)}.`,
        );
      if (c.aliascolnames) this.walk(c.aliascolnames, outer);
      this.select(body.SelectStmt, outer.with(visible));
    });
    return outer.with(names);
  }

  /** Any value of the tree: arrays, wrapped nodes (`{ "FuncCall": {...} }`) and plain fields. */
  walk(value: Json, scope: Scope): void {
    if (Array.isArray(value)) {
      for (const v of value) this.walk(v, scope);
      return;
    }
    if (value === null || typeof value !== "object") return;
    for (const [key, inner] of Object.entries(value)) {
      if (/^[A-Z]/.test(key)) this.node(key, inner, scope);
      else if (key === "typeName") this.type(inner);
      else this.walk(inner, scope);
    }
  }

  private node(type: string, n: Json, scope: Scope): void {
    this.count();
    if (++this.depth > QUERY_LIMITS.maxDepth)
      throw refuse(
        "query",
        `The query is too large (nested more than ${QUERY_LIMITS.maxDepth} levels deep).`,
      );
    this.nodeBody(type, n, scope);
    this.depth--;
  }

  private nodeBody(type: string, n: Json, scope: Scope): void {
    switch (type) {
      case "SelectStmt":
        this.select(n, scope);
        break;
      case "RangeVar":
        this.table(n, scope);
        break;
      case "FuncCall":
        this.func(n.funcname);
        this.walk({ ...n, funcname: undefined }, scope);
        break;
      case "A_Expr":
        this.operator(n.kind, n.name);
        this.walk({ ...n, name: undefined }, scope);
        break;
      case "SubLink":
        // `x = any (select ...)` names its operator too.
        if (n.operName) this.operator("AEXPR_OP", n.operName);
        this.walk({ ...n, operName: undefined }, scope);
        break;
      case "TypeCast":
        this.walk(n, scope);
        break;
      case "SQLValueFunction":
        if (!ALLOWED_VALUE_FUNCTIONS.has(n.op))
          throw refuse("function", `${String(n.op).replace("SVFOP_", "")} is not allowed.`);
        break;
      case "SortBy":
        if (n.useOp) throw refuse("query", "ORDER BY ... USING is not allowed.");
        this.walk(n, scope);
        break;
      case "ParamRef":
        throw refuse("query", "Parameters ($1) are not allowed; write the values in the query.");
      default:
        if (!PLAIN_NODES.has(type)) throw refuse("query", `${describe(type)} is not allowed.`);
        this.walk(n, scope);
    }
  }

  private table(r: Json, scope: Scope): void {
    const name = String(r.relname);
    const qualified = [r.catalogname, r.schemaname, name].filter(Boolean).join(".");
    if (r.catalogname || r.schemaname || (!scope.has(name) && !VIRTUAL_TABLES.has(name)))
      throw refuse(
        "table",
        `Table ${qualified} is not allowed; query ${[...VIRTUAL_TABLES.keys()].join(", ")}.`,
      );
    if (!scope.has(name)) this.tables.add(name);
    if (r.alias) this.walk(r.alias, scope);
  }

  private func(funcname: Json): void {
    const parts: string[] = (funcname ?? []).map((p: Json) => String(p?.String?.sval));
    const name = parts.at(-1) ?? "";
    const schemaOk = parts.length === 1 || (parts.length === 2 && parts[0] === "pg_catalog");
    if (!schemaOk || !ALLOWED_FUNCTIONS.has(name))
      throw refuse("function", `Function ${parts.join(".")} is not allowed.`);
  }

  private operator(kind: string, name: Json): void {
    if (!ALLOWED_EXPRESSION_KINDS.has(kind))
      throw refuse("query", `${String(kind).replace("AEXPR_", "")} expressions are not allowed.`);
    const parts: string[] = (name ?? []).map((p: Json) => String(p?.String?.sval));
    // BETWEEN and friends name themselves; every other kind names an operator.
    if (kind.includes("BETWEEN")) return;
    if (parts.length !== 1 || !ALLOWED_OPERATORS.has(parts[0] as string))
      throw refuse("query", `Operator ${parts.join(".")} is not allowed.`);
  }

  private type(t: Json): void {
    this.count();
    const parts: string[] = (t?.names ?? []).map((p: Json) => String(p?.String?.sval));
    const name = parts.at(-1) ?? "";
    const schemaOk = parts.length === 1 || (parts.length === 2 && parts[0] === "pg_catalog");
    if (!schemaOk || !ALLOWED_TYPES.has(name) || t.setof || t.pct_type)
      throw refuse("query", `Type ${parts.join(".")} is not allowed.`);
    if (t.typmods) this.walk(t.typmods, new Scope(null, []));
  }

  private count(): void {
    if (++this.nodes > QUERY_LIMITS.maxNodes)
      throw refuse("query", `The query is too large (more than ${QUERY_LIMITS.maxNodes} nodes).`);
  }
}

/** `CollateClause` → `COLLATE clauses`, readable in an error message. */
function describe(type: string): string {
  const words = type
    .replace(/^A_/, "")
    .replace(/([a-z])([A-Z])/g, "$1 $2")
    .replace(/Stmt$/, "statement");
  return words;
}
