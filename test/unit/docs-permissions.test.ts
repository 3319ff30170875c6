import { readFileSync, writeFileSync } from "node:fs";
import { getOption } from "@bufbuild/protobuf";
import { expect, it } from "vitest";
import { procedure as procedureOption } from "../../gen/latchkey/v2/options_pb.js";
import { permissionRow } from "../../scripts/openapi/permissions.js";
import { procedureOf, SERVED_SERVICES } from "../../src/services/procedures.js";

// The root-key permission table in the docs is written from the procedures' options, so it
// cannot drift from what the server checks. UPDATE_DOCS=1 rewrites it.

const DOC = new URL("../../docs/root-keys-and-cli.md", import.meta.url);
const START = "<!-- permissions table: written from the procedure options -->";
const END = "<!-- end of permissions table -->";

function table(): string {
  const rows = SERVED_SERVICES.flatMap((s) => s.methods).map((m) => {
    const { name, procedure } = procedureOf(m);
    return permissionRow(name, procedure.auth, getOption(m, procedureOption));
  });
  return ["| procedure | root-key permissions |", "| --- | --- |", ...rows].join("\n");
}

it("docs/root-keys-and-cli.md lists every procedure's permissions as its option declares them", () => {
  const doc = readFileSync(DOC, "utf8");
  const from = doc.indexOf(START);
  const to = doc.indexOf(END);
  expect(from, "the table's start marker").toBeGreaterThan(-1);
  expect(to, "the table's end marker").toBeGreaterThan(from);
  const expected = `${START}\n${table()}\n${END}`;
  const actual = doc.slice(from, to + END.length);
  if (process.env.UPDATE_DOCS === "1" && actual !== expected) {
    writeFileSync(DOC, doc.slice(0, from) + expected + doc.slice(to + END.length));
    return;
  }
  expect(actual, "run UPDATE_DOCS=1 npx vitest run --project unit docs-permissions").toBe(expected);
});
