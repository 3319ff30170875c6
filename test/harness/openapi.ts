import { readFileSync } from "node:fs";
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import { cidrProblem, ipProblem } from "../../src/domain/networks.js";
import { OPENAPI_DOCUMENT_URL } from "../../src/server/openapi.js";

/** The base URI the document is registered under, to compile `$ref`s into it. */
const DOCUMENT_ID = "latchkey.openapi.json";

interface Operation {
  responses: Record<string, { $ref?: string }>;
}
interface Document {
  paths: Record<string, { post?: Operation }>;
}

const document = JSON.parse(readFileSync(OPENAPI_DOCUMENT_URL, "utf8")) as Document;
const ajv = new Ajv2020({ allErrors: true, allowUnionTypes: true });
for (const format of ["int32", "int64", "float", "double"]) ajv.addFormat(format, true);
// Our own formats (the `format` rule of options.proto), checked as the doors check them.
ajv.addFormat("ip", (s: string) => ipProblem(s) === undefined);
ajv.addFormat("cidr", (s: string) => cidrProblem(s) === undefined);
// Ajv compiles the document's root to resolve `$ref`s into it: its OpenAPI keys are known
// keywords without validation there (strict mode still checks every schema inside).
ajv.addVocabulary(Object.keys(document));
ajv.addSchema(document, DOCUMENT_ID);
const validators = new Map<string, ValidateFunction>();

/** A key of the document as a JSON Pointer token (`/v2/keys.createKey` → `~1v2~1keys.createKey`). */
export function pointerToken(s: string): string {
  return s.replace(/~/g, "~0").replace(/\//g, "~1");
}

/** The JSON Pointer (in the document) of the response schema of a procedure and status. */
function schemaPointer(procedure: string, status: number, body: unknown): string {
  const path = `/v2/${procedure}`;
  const op = document.paths[path]?.post;
  // An unknown procedure is the door's 404 route_not_found, in the error envelope.
  if (!op && status === 404) return "#/components/schemas/ErrorResponse";
  if (!op) throw new Error(`${path} is not in the OpenAPI document, yet it answered ${status}`);
  const response = op.responses[String(status)];
  if (!response) {
    throw new Error(
      `${procedure} answered ${status}, a status its OpenAPI operation does not list: ${JSON.stringify(body)}`,
    );
  }
  const base = response.$ref ?? `#/paths/${pointerToken(path)}/post/responses/${status}`;
  return `${base}/content/application~1json/schema`;
}

function validatorAt(pointer: string): ValidateFunction {
  let validate = validators.get(pointer);
  if (!validate) {
    validate = ajv.compile({ $ref: `${DOCUMENT_ID}${pointer}` });
    validators.set(pointer, validate);
  }
  return validate;
}

/**
 * Throws unless a request body the door accepted (answered 200) is one the OpenAPI document
 * allows: the document must not refuse what the door takes.
 */
export function assertDocumentedRequest(procedure: string, body: unknown): void {
  const path = `/v2/${procedure}`;
  if (!document.paths[path]?.post) return;
  const validate = validatorAt(
    `#/paths/${pointerToken(path)}/post/requestBody/content/application~1json/schema`,
  );
  // As sent: JSON.stringify drops undefined values.
  const sent = JSON.parse(JSON.stringify(body ?? null));
  if (!validate(sent)) {
    throw new Error(
      `${procedure} accepted a request body the OpenAPI document refuses ` +
        `(${ajv.errorsText(validate.errors, { dataVar: "body" })}): ${JSON.stringify(sent)}`,
    );
  }
}

/**
 * Throws unless a /v2 response (status and parsed body) is one the OpenAPI document allows
 * for that procedure. Each schema is compiled once per test file.
 */
export function assertDocumentedResponse(procedure: string, status: number, body: unknown): void {
  const validate = validatorAt(schemaPointer(procedure, status, body));
  if (!validate(body)) {
    throw new Error(
      `${procedure} answered ${status} with a body the OpenAPI document does not allow ` +
        `(${ajv.errorsText(validate.errors, { dataVar: "body" })}): ${JSON.stringify(body)}`,
    );
  }
}

/**
 * What Ajv finds wrong with a value against the schema at a JSON Pointer into the document
 * (`#/paths/...`), or undefined when the schema allows it.
 */
export function schemaErrorsAt(pointer: string, value: unknown): string | undefined {
  const validate = validatorAt(pointer);
  return validate(value) ? undefined : ajv.errorsText(validate.errors, { dataVar: "example" });
}
