import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { OPENAPI_DOCUMENT_URL } from "../../src/server/openapi.js";
import { pointerToken, schemaErrorsAt } from "../harness/openapi.js";

// biome-ignore lint/suspicious/noExplicitAny: the document is read as plain JSON
const doc: any = JSON.parse(readFileSync(OPENAPI_DOCUMENT_URL, "utf8"));
const JSON_MEDIA = "application~1json";

/** Every operation of the document with the JSON Pointer of its object. */
const operations = Object.entries(doc.paths).flatMap(([path, item]) =>
  // biome-ignore lint/suspicious/noExplicitAny: plain JSON
  Object.entries(item as Record<string, any>).map(([method, op]) => ({
    id: op.operationId as string,
    op,
    pointer: `#/paths/${pointerToken(path)}/${method}`,
  })),
);

describe("the examples of the OpenAPI document", () => {
  it("give every operation a request example (with a body) and a 200 example", () => {
    for (const { id, op } of operations) {
      if (op.requestBody)
        expect(op.requestBody.content["application/json"], id).toHaveProperty("example");
      expect(op.responses["200"].content["application/json"], id).toHaveProperty("example");
    }
  });

  it("are valid against the request and 200 response schemas they illustrate", () => {
    const wrong: string[] = [];
    for (const { id, op, pointer } of operations) {
      const checks: [string, unknown][] = [
        [
          `${pointer}/responses/200/content/${JSON_MEDIA}/schema`,
          op.responses["200"].content["application/json"].example,
        ],
      ];
      if (op.requestBody)
        checks.push([
          `${pointer}/requestBody/content/${JSON_MEDIA}/schema`,
          op.requestBody.content["application/json"].example,
        ]);
      for (const [schema, example] of checks) {
        const errors = schemaErrorsAt(schema, example);
        if (errors !== undefined) wrong.push(`${id} (${schema}): ${errors}`);
      }
    }
    expect(wrong).toEqual([]);
  });
});

/** Every string the renderer shows as Markdown: descriptions, wherever they are. */
function descriptions(value: unknown, at = "#"): { at: string; text: string }[] {
  if (value === null || typeof value !== "object") return [];
  return Object.entries(value).flatMap(([key, v]) =>
    key === "description" && typeof v === "string"
      ? [{ at, text: v }]
      : descriptions(v, `${at}/${pointerToken(key)}`),
  );
}

describe("the descriptions of the OpenAPI document", () => {
  it("write placeholders such as <apiId> in code spans, where Markdown does not take them for HTML", () => {
    const swallowed = descriptions(doc)
      .map(({ at, text }) => ({ at, outside: text.replace(/`[^`]*`/g, "") }))
      .filter(({ outside }) => /<[A-Za-z/!]/.test(outside))
      .map(({ at, outside }) => `${at}: ${outside.match(/.{0,30}<[A-Za-z/!].{0,20}/)?.[0]}`);
    expect(swallowed).toEqual([]);
  });
});
