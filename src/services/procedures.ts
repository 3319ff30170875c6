import { type DescMethod, getOption, hasOption } from "@bufbuild/protobuf";
import { AnalyticsService } from "../../gen/latchkey/v2/analytics_pb.js";
import { ApisService } from "../../gen/latchkey/v2/apis_pb.js";
import { IdentitiesService } from "../../gen/latchkey/v2/identities_pb.js";
import { KeysService } from "../../gen/latchkey/v2/keys_pb.js";
import { LivenessService } from "../../gen/latchkey/v2/liveness_pb.js";
import { AuthSchema, procedure as procedureOption } from "../../gen/latchkey/v2/options_pb.js";
import { PermissionsService } from "../../gen/latchkey/v2/permissions_pb.js";
import { RatelimitService } from "../../gen/latchkey/v2/ratelimit_pb.js";
import { WebhooksService } from "../../gen/latchkey/v2/webhooks_pb.js";
import { namespaceOf, type Procedure, procedureFromOption } from "./procedure-shape.js";

export { type AuthMode, namespaceOf, type Procedure } from "./procedure-shape.js";

/** Every service Latchkey serves, in the order the doors and the API reference list them. */
export const SERVED_SERVICES = [
  LivenessService,
  ApisService,
  KeysService,
  IdentitiesService,
  PermissionsService,
  RatelimitService,
  AnalyticsService,
  WebhooksService,
] as const;

/** The name of a procedure on the /v2 door: `apis.createApi`. */
export type ProcedureName =
  | `liveness.${Extract<keyof (typeof LivenessService)["method"], string>}`
  | `apis.${Extract<keyof (typeof ApisService)["method"], string>}`
  | `keys.${Extract<keyof (typeof KeysService)["method"], string>}`
  | `identities.${Extract<keyof (typeof IdentitiesService)["method"], string>}`
  | `permissions.${Extract<keyof (typeof PermissionsService)["method"], string>}`
  | `ratelimit.${Extract<keyof (typeof RatelimitService)["method"], string>}`
  | `analytics.${Extract<keyof (typeof AnalyticsService)["method"], string>}`
  | `webhooks.${Extract<keyof (typeof WebhooksService)["method"], string>}`;

const byMethod = new WeakMap<DescMethod, { name: string; procedure: Procedure }>();

/**
 * The procedure of a method, read from its rpc's `(latchkey.v2.procedure)` option; throws a
 * TypeError naming the procedure when the rpc has no option, or a malformed one.
 */
export function procedureOf(method: DescMethod): { name: string; procedure: Procedure } {
  let found = byMethod.get(method);
  if (!found) {
    const name = `${namespaceOf(method.parent)}.${method.localName}`;
    if (!hasOption(method, procedureOption))
      throw new TypeError(`procedure ${name}: its rpc has no (latchkey.v2.procedure) option`);
    const procedure = procedureFromOption(name, getOption(method, procedureOption), AuthSchema);
    found = { name, procedure };
    byMethod.set(method, found);
  }
  return found;
}

/**
 * THE table of procedures, derived from the procedure options of the served services' rpcs:
 * every procedure Latchkey serves, with the authentication it needs and the root-key
 * permissions it checks. Reading it at start refuses an rpc without its option. Permissions
 * are `resource.id.action`, as the public system names them; a granted `*` segment covers
 * any one segment (`api.*.read_api` covers `api.api_123.read_api`).
 */
export const procedures: Readonly<Record<ProcedureName, Procedure>> = Object.fromEntries(
  SERVED_SERVICES.flatMap((s) => s.methods).map((m) => {
    const { name, procedure } = procedureOf(m);
    return [name, procedure];
  }),
) as Record<ProcedureName, Procedure>;

const compiled = new Map<string, string[]>();

/** Fills the `{placeholders}` of a permission template (parsed once per template). */
export function fillPermission(template: string, vars: Readonly<Record<string, string>>): string {
  let parts = compiled.get(template);
  if (!parts) {
    // Odd indexes are placeholder names: "api.{apiId}.read" → ["api.", "apiId", ".read"].
    parts = template.split(/\{(\w+)\}/);
    compiled.set(template, parts);
  }
  if (parts.length === 1) return template;
  let out = "";
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i] as string;
    if (i % 2 === 0) {
      out += part;
      continue;
    }
    const v = vars[part];
    if (v === undefined) throw new TypeError(`permission ${template} needs {${part}}`);
    out += v;
  }
  return out;
}
