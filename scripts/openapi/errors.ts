import type { DescMessage } from "@bufbuild/protobuf";
import { type CatalogEntry, catalog } from "../../src/errors/catalog.ts";
import type { AuthMode } from "../../src/services/procedures.ts";
import { commentOf, described, type Schema, type SchemaBuilder } from "./schemas.ts";

type CatalogKey = keyof typeof catalog;

/** What every procedure with a JSON body can answer, whatever it does. */
const BODY: readonly CatalogKey[] = [
  "invalidInput",
  "requestBodyTooLarge",
  "unsupportedMediaType",
  "unexpectedError",
];

/** What authenticating a root key (against the database) can answer. */
const AUTHENTICATED: readonly CatalogKey[] = [
  "authenticationMissing",
  "authenticationMalformed",
  "rootKeyNotFound",
  "insufficientPermissions",
  "serviceUnavailable",
];

/** The fields of ErrorDetail that the /v2 door renders as `error` (error-envelope.ts). */
const RENDERED = ["detail", "status", "title", "type", "errors"];

/** `$ref`s to the two error envelopes. */
export interface ErrorRefs {
  /** `{meta, error}` without `errors`. */
  plain: Schema;
  /** `{meta, error}` with `errors` (400 and 413: present even when empty). */
  withViolations: Schema;
}

/**
 * Adds the error envelopes to the components: ErrorDetail as the /v2 door renders it (its
 * `code` is the end of `type`, its `requestId` is `meta.requestId`), with and without the
 * list of violations.
 */
export function addErrorSchemas(builder: SchemaBuilder, detail: DescMessage, meta: Schema) {
  const error = (withViolations: boolean): Schema => {
    const properties: Record<string, Schema> = {};
    const required: string[] = [];
    for (const name of RENDERED) {
      const f = detail.fields.find((x) => x.jsonName === name);
      if (!f) throw new Error(`${detail.typeName} has no field ${name}`);
      const field = builder.responseField(f);
      properties[name] = field.schema;
      if (field.required || (name === "errors" && withViolations)) required.push(name);
    }
    if (!withViolations) delete properties.errors;
    return described(
      { type: "object", properties, required, additionalProperties: false },
      commentOf(detail),
    );
  };
  const envelope = (errorRef: Schema): Schema => ({
    description: "The error envelope of the /v2 door.",
    type: "object",
    properties: { meta, error: errorRef },
    required: ["meta", "error"],
    additionalProperties: false,
  });
  return {
    plain: builder.add("ErrorResponse", envelope(builder.add("Error", error(false)))),
    withViolations: builder.add(
      "ValidationErrorResponse",
      envelope(builder.add("ValidationError", error(true))),
    ),
  } satisfies ErrorRefs;
}

/** The header every response carries. */
export const REQUEST_ID_HEADER = { $ref: "#/components/headers/RequestId" };

function response(status: number, entries: CatalogEntry[], refs: ErrorRefs): Schema {
  const title = entries[0]?.title ?? "";
  const codes = entries.map((e) => `\`${e.code}\``).join(", ");
  return {
    description: `${title}: ${codes}.`,
    headers: { "x-request-id": REQUEST_ID_HEADER },
    content: {
      "application/json": {
        schema: status === 400 || status === 413 ? refs.withViolations : refs.plain,
      },
    },
  };
}

/** Error responses by procedure; the ones every procedure of a kind shares are components. */
export interface ErrorResponses {
  /**
   * The error responses of a procedure by status, each listing its catalog codes: those every
   * procedure of its kind answers, plus `specific`, the catalog names its procedure option lists.
   */
  of(
    procedure: string,
    auth: AuthMode,
    hasBody: boolean,
    specific: readonly string[],
  ): Record<string, Schema>;
  /** The shared responses, for `components.responses`. */
  components(): Record<string, Schema>;
}

/** Builds the error responses of every procedure over the two error envelopes. */
export function createErrorResponses(refs: ErrorRefs): ErrorResponses {
  const generic = new Set<CatalogKey>([...BODY, ...AUTHENTICATED]);
  const shared = new Map<string, Schema>();
  return {
    of(procedure, auth, hasBody, specific) {
      for (const name of specific)
        if (!(name in catalog))
          throw new Error(
            `procedure ${procedure}: error ${name} of its option is not in the catalog`,
          );
      const keys = new Set<CatalogKey>([
        ...(hasBody ? BODY : ["unexpectedError" as const]),
        ...(auth === "none" ? [] : AUTHENTICATED),
        ...(hasBody ? (specific as readonly CatalogKey[]) : []),
      ]);
      const byStatus = new Map<number, CatalogKey[]>();
      for (const key of keys) {
        const status = catalog[key].status;
        byStatus.set(status, [...(byStatus.get(status) ?? []), key]);
      }
      const out: Record<string, Schema> = {};
      for (const status of [...byStatus.keys()].sort((a, b) => a - b)) {
        const group = byStatus.get(status) ?? [];
        const entries = group.map((key) => catalog[key]);
        if (!group.every((key) => generic.has(key))) {
          out[String(status)] = response(status, entries, refs);
          continue;
        }
        // Named after the reason phrase: "Content Too Large" → ContentTooLarge.
        const name = (entries[0]?.title ?? "").replace(/\s+/g, "");
        const schema = response(status, entries, refs);
        const existing = shared.get(name);
        if (existing && JSON.stringify(existing) !== JSON.stringify(schema)) {
          throw new Error(`two different shared responses named ${name}`);
        }
        shared.set(name, schema);
        out[String(status)] = { $ref: `#/components/responses/${name}` };
      }
      return out;
    },
    components: () => Object.fromEntries([...shared].sort(([a], [b]) => (a < b ? -1 : 1))),
  };
}
