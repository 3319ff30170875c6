import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { MINIMUM_NODE_MAJOR, unsupportedNode } from "../../src/cli/node-version.js";

describe("the Node version the bin accepts", () => {
  it("is the one package.json declares in engines", () => {
    const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8"));
    expect(pkg.engines.node).toBe(`>=${MINIMUM_NODE_MAJOR}`);
  });

  it("refuses an older major in one line naming the version needed and the one found", () => {
    expect(unsupportedNode("20.20.2")).toBe(
      `latchkey needs Node.js ${MINIMUM_NODE_MAJOR} or newer; this is Node.js v20.20.2`,
    );
    expect(unsupportedNode(`${MINIMUM_NODE_MAJOR - 1}.99.0`)).toMatch(/^latchkey needs/);
  });

  it("accepts the minimum and anything newer", () => {
    expect(unsupportedNode(`${MINIMUM_NODE_MAJOR}.0.0`)).toBeUndefined();
    expect(unsupportedNode("24.21.0")).toBeUndefined();
  });
});
