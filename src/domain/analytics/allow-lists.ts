/**
 * What an analytics query may use besides the virtual tables. Everything not listed is
 * refused, so a function added to PostgreSQL later is refused until someone adds it here.
 * The lists hold pure, bounded functions: nothing that reads the server's state
 * (`current_setting`, catalogs), sleeps, writes, or runs SQL of its own (`query_to_xml`).
 */

/** Functions by name; `pg_catalog.` may be written before any of them. */
export const ALLOWED_FUNCTIONS: ReadonlySet<string> = new Set([
  // aggregates
  "count",
  "sum",
  "avg",
  "min",
  "max",
  "array_agg",
  "string_agg",
  "bool_and",
  "bool_or",
  "every",
  "percentile_cont",
  "percentile_disc",
  "mode",
  "stddev",
  "stddev_pop",
  "stddev_samp",
  "variance",
  // window functions
  "row_number",
  "rank",
  "dense_rank",
  "percent_rank",
  "cume_dist",
  "ntile",
  "lag",
  "lead",
  "first_value",
  "last_value",
  "nth_value",
  // time (extract, AT TIME ZONE arrive as pg_catalog.extract and pg_catalog.timezone)
  "now",
  "date_trunc",
  "date_part",
  "extract",
  "date_bin",
  "to_timestamp",
  "to_char",
  "make_interval",
  "timezone",
  "age",
  // text (trim arrives as btrim/ltrim/rtrim, position as position)
  "lower",
  "upper",
  "length",
  "char_length",
  "substring",
  "substr",
  "concat",
  "concat_ws",
  "btrim",
  "ltrim",
  "rtrim",
  "starts_with",
  "left",
  "right",
  "replace",
  "split_part",
  "strpos",
  "position",
  "lpad",
  "rpad",
  // numbers
  "round",
  "floor",
  "ceil",
  "ceiling",
  "abs",
  "trunc",
  "sign",
  "div",
  "mod",
  // arrays (tags)
  "array_length",
  "cardinality",
  "unnest",
  "array_to_string",
  "array_position",
]);

/** Operators of expressions (`=`, `+`, LIKE as `~~`, arrays `@>` ...). */
export const ALLOWED_OPERATORS: ReadonlySet<string> = new Set([
  "=",
  "<>",
  "!=",
  "<",
  ">",
  "<=",
  ">=",
  "+",
  "-",
  "*",
  "/",
  "%",
  "||",
  "~~",
  "!~~",
  "~~*",
  "!~~*",
  "~",
  "~*",
  "!~",
  "!~*",
  "@>",
  "<@",
  "&&",
]);

/** Kinds of operator expressions. */
export const ALLOWED_EXPRESSION_KINDS: ReadonlySet<string> = new Set([
  "AEXPR_OP",
  "AEXPR_OP_ANY",
  "AEXPR_OP_ALL",
  "AEXPR_DISTINCT",
  "AEXPR_NOT_DISTINCT",
  "AEXPR_NULLIF",
  "AEXPR_IN",
  "AEXPR_LIKE",
  "AEXPR_ILIKE",
  "AEXPR_BETWEEN",
  "AEXPR_NOT_BETWEEN",
  "AEXPR_BETWEEN_SYM",
  "AEXPR_NOT_BETWEEN_SYM",
]);

/** Types a value may be cast to; `pg_catalog.` may precede them (`bigint` is `pg_catalog.int8`). */
export const ALLOWED_TYPES: ReadonlySet<string> = new Set([
  "text",
  "varchar",
  "bpchar",
  "int",
  "integer",
  "bigint",
  "smallint",
  "int2",
  "int4",
  "int8",
  "numeric",
  "decimal",
  "real",
  "float4",
  "float8",
  "bool",
  "boolean",
  "date",
  "time",
  "timestamp",
  "timestamptz",
  "interval",
]);

/** SQL value functions: the date and time ones (not current_user, current_schema ...). */
export const ALLOWED_VALUE_FUNCTIONS: ReadonlySet<string> = new Set([
  "SVFOP_CURRENT_DATE",
  "SVFOP_CURRENT_TIME",
  "SVFOP_CURRENT_TIME_N",
  "SVFOP_CURRENT_TIMESTAMP",
  "SVFOP_CURRENT_TIMESTAMP_N",
  "SVFOP_LOCALTIME",
  "SVFOP_LOCALTIME_N",
  "SVFOP_LOCALTIMESTAMP",
  "SVFOP_LOCALTIMESTAMP_N",
]);

/**
 * Parse-tree nodes a query may contain. Nodes with rules of their own (statements, tables,
 * functions, casts, operators) are checked by the guard; these may appear freely.
 */
export const PLAIN_NODES: ReadonlySet<string> = new Set([
  "ResTarget",
  "ColumnRef",
  "A_Star",
  "String",
  "Integer",
  "Float",
  "Boolean",
  "A_Const",
  "BoolExpr",
  "NullTest",
  "BooleanTest",
  "CaseExpr",
  "CaseWhen",
  "CoalesceExpr",
  "MinMaxExpr",
  "SubLink",
  "RangeSubselect",
  "RangeFunction",
  "JoinExpr",
  "WindowDef",
  "A_Indirection",
  "A_Indices",
  "A_ArrayExpr",
  "RowExpr",
  "List",
  "GroupingSet",
]);

/**
 * Query size bounds. maxDepth bounds the nesting of nodes (`1 + 1 + ... + 1`
 * nests one level per `+`): the guard walks the tree recursively, and 2,000 levels overflowed
 * the stack (a RangeError, not a 400).
 */
export const QUERY_LIMITS = { maxNodes: 2000, maxDepth: 200, maxColumns: 64 } as const;
