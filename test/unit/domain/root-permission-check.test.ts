import { describe, expect, it } from "vitest";
import { closest, editDistance } from "../../../src/domain/closest.js";
import { checkedResources, grantProblem } from "../../../src/domain/root-permission-check.js";
import { procedures } from "../../../src/services/procedures.js";

const templates = Object.values(procedures).flatMap((p) => [
  ...(p.permission === undefined ? [] : [p.permission].flat()),
  ...Object.values(p.when ?? {}),
]);
const resources = checkedResources(templates);

describe("grantProblem", () => {
  it("accepts every permission a procedure checks, with a * id or a named one", () => {
    for (const t of templates) {
      expect(grantProblem(t.replace(/\{\w+\}/, "*"), resources), t).toBeUndefined();
      expect(grantProblem(t.replace(/\{\w+\}/, "id_123"), resources), t).toBeUndefined();
    }
  });

  it.each(["*.*.*", "api.*.*", "*.*.read_api", "api.api_1.*", "*.id_1.*", "rbac.*.*"])(
    "accepts the wildcard %s, as the server matches it",
    (p) => expect(grantProblem(p, resources)).toBeUndefined(),
  );

  it.each([
    ["api.*.read_ap", "names no action the server checks", "api.*.read_api"],
    ["api.api_7.raed_key", "names no action the server checks", "api.api_7.read_key"],
    ["apis.*.create_api", "names no resource the server checks", "api.*.create_api"],
    ["*.*.read_apis", "names no action the server checks", "api.*.read_api"],
    ["rbac.role_1.create_role", "workspace-wide", "rbac.*.create_role"],
    ["api.*.read_api.x", "is not resource.id.action", undefined],
    ["api..read_api", "is not resource.id.action", "api.*.read_api"],
  ])("refuses %s (%s), suggesting %s", (p, problem, suggestion) => {
    const found = grantProblem(p, resources);
    expect(found?.problem).toContain(problem);
    if (suggestion) expect(found?.suggestion).toBe(suggestion);
  });
});

describe("closest", () => {
  it("finds the nearest candidate within a distance", () => {
    expect(editDistance("kitten", "sitting")).toBe(3);
    expect(closest("serv", ["serve", "migrate"])).toBe("serve");
    expect(closest("xyz", ["serve", "migrate"], 2)).toBeUndefined();
    expect(closest("a", [])).toBeUndefined();
  });
});
