import type { DescEnum, DescService } from "@bufbuild/protobuf";

// Reads the `(latchkey.v2.procedure)` option of an rpc. Nothing here imports generated code at
// run time: the OpenAPI generator uses it too, while `buf generate` rewrites gen/.

/** Whether a procedure needs `Authorization: Bearer <root key>`. */
export type AuthMode = "none" | "required" | "optional";

/** What one procedure demands of its caller, from its rpc's procedure option. */
export interface Procedure {
  auth: AuthMode;
  /**
   * The root-key permissions it needs (all of them), `resource.id.action`; a string when
   * there is one. `{name}` placeholders are filled by the procedure with ids it has resolved
   * (`api.{apiId}.read_api`).
   */
  permission?: string | readonly string[];
  /**
   * Permissions needed only when the call does something in particular (creating missing
   * permissions, say), by name of that case; the procedure names the cases that apply.
   */
  when?: Readonly<Record<string, string>>;
  /** The audit events the procedure's own change is recorded under (none for a read). */
  auditEvents: readonly string[];
}

/** The option as protobuf-es reads it (latchkey.v2.Procedure in options.proto). */
export interface ProcedureOptionValue {
  auth: number;
  permissions: readonly string[];
  when: readonly { case: string; permission: string; condition: string }[];
  auditEvents: readonly string[];
  /** Catalog names of the errors it answers besides the ones every procedure may. */
  errors: readonly string[];
}

/**
 * The case names the procedures' code passes to `authorize`. An option naming another is a
 * typo the server refuses to start with, rather than a case no call ever meets.
 */
export const PERMISSION_CASES: ReadonlySet<string> = new Set([
  "addRoles",
  "removeRoles",
  "addPermissions",
  "removePermissions",
  "createPermissions",
  "createIdentity",
  "attachPermissions",
]);

/** `resource.id.action`, the id `*` or one `{placeholder}`. */
const TEMPLATE = /^[a-z]+\.(\*|\{[a-zA-Z]+\})\.[a-z_]+$/;
/** `resource.action`, as the audit log names events. */
const EVENT = /^[a-zA-Z]+\.[a-z_]+$/;

/** The /v2 namespace of a service: `latchkey.v2.ApisService` → `apis`. */
export function namespaceOf(service: DescService): string {
  const base = service.name.replace(/Service$/, "");
  return base.charAt(0).toLowerCase() + base.slice(1);
}

/** The mode an Auth enum value names (AUTH_REQUIRED → "required"); throws when unset. */
function authModeOf(name: string, authEnum: DescEnum, value: number): AuthMode {
  const mode = authEnum.value[value]?.name.replace(/^AUTH_/, "").toLowerCase();
  if (mode === "none" || mode === "required" || mode === "optional") return mode;
  throw new TypeError(`procedure ${name}: its procedure option sets no auth`);
}

/** Throws naming the procedure unless every template and case of its option is well formed. */
function check(name: string, option: ProcedureOptionValue): void {
  const fail = (what: string) => {
    throw new TypeError(`procedure ${name}: ${what} in its procedure option`);
  };
  for (const t of [...option.permissions, ...option.when.map((w) => w.permission)])
    if (!TEMPLATE.test(t)) fail(`permission ${JSON.stringify(t)} is not resource.id.action`);
  const seen = new Set<string>();
  for (const w of option.when) {
    if (!PERMISSION_CASES.has(w.case)) fail(`case ${JSON.stringify(w.case)} is no known case`);
    if (seen.has(w.case)) fail(`case ${w.case} is given twice`);
    if (w.condition.trim() === "") fail(`case ${w.case} has no condition`);
    seen.add(w.case);
  }
  for (const e of option.auditEvents)
    if (!EVENT.test(e)) fail(`audit event ${JSON.stringify(e)} is not resource.action`);
}

/**
 * The table entry of a procedure from its rpc's option (`authEnum` is latchkey.v2.Auth);
 * throws a TypeError naming the procedure for an option that is incomplete or malformed.
 */
export function procedureFromOption(
  name: string,
  option: ProcedureOptionValue,
  authEnum: DescEnum,
): Procedure {
  const auth = authModeOf(name, authEnum, option.auth);
  check(name, option);
  const procedure: Procedure = { auth, auditEvents: [...option.auditEvents] };
  const [first, ...more] = option.permissions;
  if (first !== undefined) procedure.permission = more.length === 0 ? first : [first, ...more];
  if (option.when.length > 0)
    procedure.when = Object.fromEntries(option.when.map((w) => [w.case, w.permission]));
  return procedure;
}
