import type { DescFile, DescMessage, DescMethod, Registry } from "@bufbuild/protobuf";
import { type AuthMode, namespaceOf } from "../../src/services/procedure-shape.ts";
import {
  addErrorSchemas,
  createErrorResponses,
  type ErrorResponses,
  REQUEST_ID_HEADER,
} from "./errors.ts";
import { EXAMPLES, type Example, exampleOf, IDS } from "./examples/index.ts";
import { introduction } from "./intro.ts";
import { type Options, readOptions } from "./options.ts";
import { permissionSentence } from "./permissions.ts";
import {
  collectUsage,
  commentOf,
  createSchemaBuilder,
  type Schema,
  type SchemaBuilder,
} from "./schemas.ts";

/** json-door.ts also serves liveness.check here, by POST and by GET. */
const LIVENESS_PATH = "/v2/liveness";
const LIVENESS = "liveness.check";

function message(registry: Registry, typeName: string): DescMessage {
  const found = registry.getMessage(typeName);
  if (!found) throw new Error(`${typeName} is not in the request`);
  return found;
}

function securityOf(auth: AuthMode): Schema[] {
  if (auth === "none") return [];
  return auth === "required" ? [{ rootKey: [] }] : [{ rootKey: [] }, {}];
}

function summaryOf(text: string | undefined): string | undefined {
  if (text === undefined) return undefined;
  const end = text.indexOf(". ");
  return end < 0 ? text : text.slice(0, end + 1);
}

interface Context {
  opts: Options;
  builder: SchemaBuilder;
  errors: ErrorResponses;
  bareArrayField(desc: DescMessage): string | undefined;
}

/** The request body: the request message, or also a bare array where the message allows it. */
function requestBody(ctx: Context, input: DescMessage, example: Example): Schema {
  let schema = ctx.builder.ref(input, "request");
  const bare = ctx.bareArrayField(input);
  if (bare !== undefined) {
    const f = input.fields.find((x) => x.name === bare);
    if (!f?.message || f.fieldKind !== "list") {
      throw new Error(`${input.typeName}: bare_array_field names no repeated message field`);
    }
    const wrapped = ctx.builder.components()[ref(schema)]?.properties as Record<string, Schema>;
    const list = wrapped[f.jsonName] as Schema;
    schema = {
      oneOf: [
        schema,
        { ...list, description: `The bare array, meaning \`{"${f.jsonName}": [...]}\`.` },
      ],
    };
  }
  return { required: true, content: { "application/json": { schema, example: example.request } } };
}

/** The component name a `$ref` points at. */
function ref(schema: Schema): string {
  return String(schema.$ref).slice("#/components/schemas/".length);
}

function operation(
  ctx: Context,
  m: DescMethod,
  name: string,
  operationId: string,
  hasBody: boolean,
): Schema {
  const { option, table } = ctx.opts.procedure(m, name);
  const auth = table.auth;
  const comment = commentOf(m);
  const example = exampleOf(name);
  const op: Schema = { operationId, tags: [namespaceOf(m.parent)] };
  const summary = summaryOf(comment);
  if (summary !== undefined) op.summary = summary;
  // The permissions come from the rpc's procedure option, not from prose kept beside it.
  const description = [comment, permissionSentence(auth, option)].filter((x) => x !== undefined);
  if (description.length > 0 && description.join(" ") !== summary)
    op.description = description.join(" ");
  op.security = securityOf(auth);
  if (hasBody) op.requestBody = requestBody(ctx, m.input, example);
  op.responses = {
    "200": {
      description: commentOf(m.output) ?? "OK",
      headers: { "x-request-id": REQUEST_ID_HEADER },
      content: {
        "application/json": {
          schema: ctx.builder.ref(m.output, "response"),
          example: { meta: { requestId: IDS.requestId }, ...example.response },
        },
      },
    },
    ...ctx.errors.of(name, auth, hasBody, option.errors),
  };
  return op;
}

/** The OpenAPI 3.1 document of the /v2 JSON door for the services of `files`. */
export function buildDocument(registry: Registry, files: readonly DescFile[]): Schema {
  const opts = readOptions(registry);
  const services = files.flatMap((f) => f.services);
  const methods = services.flatMap((s) => s.methods);
  const detail = message(registry, "latchkey.v2.ErrorDetail");
  const builder = createSchemaBuilder(opts, collectUsage(methods, [detail]));
  const meta = builder.ref(message(registry, "latchkey.v2.ResponseMeta"), "response");
  const ctx: Context = {
    opts,
    builder,
    errors: createErrorResponses(addErrorSchemas(builder, detail, meta)),
    bareArrayField: (desc) => opts.messageRules(desc)?.bareArrayField,
  };

  const names = methods.map((m) => `${namespaceOf(m.parent)}.${m.localName}`);
  const stale = Object.keys(EXAMPLES).filter((name) => !names.includes(name));
  if (stale.length > 0) throw new Error(`examples of procedures that do not exist: ${stale}`);
  const paths: Record<string, Schema> = {};
  for (const m of methods) {
    const name = `${namespaceOf(m.parent)}.${m.localName}`;
    paths[`/v2/${name}`] = { post: operation(ctx, m, name, name, true) };
    if (name === LIVENESS) {
      paths[LIVENESS_PATH] = {
        get: operation(ctx, m, name, "liveness.get", false),
        post: operation(ctx, m, name, "liveness.post", true),
      };
    }
  }
  const pkg = files[0]?.proto.package ?? "";
  return {
    openapi: "3.1.0",
    info: {
      title: "Latchkey",
      version: pkg.slice(pkg.lastIndexOf(".") + 1),
      description: introduction(),
    },
    tags: services.map((s) => {
      const description = commentOf(s);
      return description === undefined
        ? { name: namespaceOf(s) }
        : { name: namespaceOf(s), description };
    }),
    paths,
    components: {
      schemas: builder.components(),
      responses: ctx.errors.components(),
      headers: {
        RequestId: {
          description: "The request id, as in `meta.requestId`.",
          schema: { type: "string", pattern: "^req_" },
        },
      },
      securitySchemes: {
        rootKey: {
          type: "http",
          scheme: "bearer",
          description:
            "A root key, sent as `Authorization: Bearer <root key>`. The first one is printed when an instance starts on an empty database.",
        },
      },
    },
  };
}
