import { describe, expect, it } from "vitest";
import { parseQuery, QuerySyntaxError, satisfies } from "../../../src/domain/permission-query.js";

const held = ["documents.read", "billing.*", "admin", "api:v1/keys.read"];

describe("the permissions query language", () => {
  it.each([
    ["documents.read", true],
    ["documents.write", false],
    ["documents.read AND admin", true],
    ["documents.read AND documents.write", false],
    ["documents.write OR admin", true],
    ["documents.write or admin", true],
    ["documents.write Or admin", true],
    ["documents.read and billing.invoices.read", true],
    ["billing", false],
    ["documents.write OR admin AND nope", false],
    ["admin OR documents.write AND nope", true],
    ["(documents.write OR admin) AND billing.x", true],
    ["(documents.write OR admin) AND nope", false],
    ["((documents.read))", true],
    ["  documents.read\t\nAND\r\nadmin  ", true],
    ["api:v1/keys.read", true],
    ["ANDROID", false],
    ["ORACLE OR admin", true],
  ])("%s is %s", (query, expected) => {
    expect(satisfies(parseQuery(query), held)).toBe(expected);
  });

  it("binds AND tighter than OR", () => {
    expect(parseQuery("a OR b AND c")).toEqual({
      kind: "or",
      items: [
        { kind: "name", name: "a" },
        {
          kind: "and",
          items: [
            { kind: "name", name: "b" },
            { kind: "name", name: "c" },
          ],
        },
      ],
    });
  });

  it("handles 100 leaves", () => {
    const q = Array.from({ length: 100 }, (_, i) => `p${i}.read`).join(" OR ");
    expect(satisfies(parseQuery(q), ["p99.read"])).toBe(true);
  });

  it.each([
    ["permission_1 AND", "Unexpected end of query", 16],
    ["(permission_1 AND permission_2", "Missing closing parenthesis ')' at position 30", 30],
    // The reference's examples: the empty pair is reported at its closing parenthesis.
    ["permission_1 AND ()", "Empty parentheses found at position 18", 18],
    ["AND permission_1", "Unexpected token 'AND' at position 0", 0],
    ["a b", "Unexpected token 'b' at position 2", 2],
    ["a)", "Unexpected token ')' at position 1", 1],
    ["   ", "Unexpected end of input", 0],
    ["docs.read AND $", "Invalid character '$' at position 14", 14],
    ["docs.read, admin", "Invalid character ',' at position 9", 9],
    ["!admin", "Invalid character '!' at position 0", 0],
    ["a OR OR b", "Unexpected token 'OR' at position 5", 5],
    // Positions are UTF-8 byte offsets: é is 2 bytes, 😀 is 4 (2 string units).
    ["é AND ()", "Empty parentheses found at position 8", 8],
    ["😀 b", "Unexpected token 'b' at position 5", 5],
    ["ü AND $", "Invalid character '$' at position 7", 7],
    ["(ü", "Missing closing parenthesis ')' at position 3", 3],
  ])("rejects %j: %s (position %i)", (query, message, position) => {
    let error: unknown;
    try {
      parseQuery(query);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(QuerySyntaxError);
    expect((error as QuerySyntaxError).message).toContain(message);
    expect((error as QuerySyntaxError).position).toBe(position);
  });
});
