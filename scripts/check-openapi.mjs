// Checks the generated OpenAPI document (npm run lint): valid against the OpenAPI 3.1
// specification (@readme/openapi-parser), and every component schema compiles as a strict
// JSON Schema 2020-12 (Ajv), so a bad keyword or a pattern that is not an ECMAScript
// regular expression fails here rather than in a client.
import { readFile } from "node:fs/promises";
import { compileErrors, validate } from "@readme/openapi-parser";
import { Ajv2020 } from "ajv/dist/2020.js";

const file = new URL("../gen/openapi/latchkey.openapi.json", import.meta.url);
const text = await readFile(file, "utf8");

const result = await validate(JSON.parse(text));
if (!result.valid) {
  console.error(compileErrors(result));
  process.exit(1);
}
if (result.warnings.length > 0) {
  for (const w of result.warnings) console.error(`warning: ${w.message}`);
  process.exit(1);
}

const document = JSON.parse(text);
const ajv = new Ajv2020({ allowUnionTypes: true });
// OpenAPI's number formats, and our own string formats ("ip", "cidr": the `format` rule of
// options.proto), which the doors check themselves.
for (const format of ["int32", "int64", "float", "double", "ip", "cidr"])
  ajv.addFormat(format, true);
ajv.addVocabulary(Object.keys(document));
ajv.addSchema(document, "openapi.json");
for (const name of Object.keys(document.components.schemas)) {
  ajv.compile({ $ref: `openapi.json#/components/schemas/${name}` });
}

const operations = Object.values(document.paths).flatMap((p) => Object.keys(p));
console.log(
  `gen/openapi/latchkey.openapi.json: valid OpenAPI ${document.openapi}, ` +
    `${operations.length} operations, ${Object.keys(document.components.schemas).length} schemas`,
);
