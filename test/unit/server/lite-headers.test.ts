import { describe, expect, it } from "vitest";
import { LiteHeaders } from "../../../src/server/lite-headers.js";

describe("LiteHeaders.fromNode", () => {
  const raw = () => ({
    ":path": "/v2/keys.verifyKey",
    "content-type": "application/json",
    "x-forwarded-for": ["10.0.0.1", "10.0.0.2"],
    authorization: "Bearer abc",
    empty: undefined,
  });

  it("reads Node's record case-insensitively, joins repeats and hides pseudo-headers", () => {
    const h = LiteHeaders.fromNode(raw());
    expect(h.get("Content-Type")).toBe("application/json");
    expect(h.get("x-forwarded-for")).toBe("10.0.0.1, 10.0.0.2");
    expect(h.get(":path")).toBeNull();
    expect(h.get("empty")).toBeNull();
    expect(h.has("AUTHORIZATION")).toBe(true);
    expect(h.has("cookie")).toBe(false);
    // Node's record is a plain object: inherited names are not headers.
    expect(h.get("constructor")).toBeNull();
    expect(h.get("__proto__")).toBeNull();
    expect(h.has("toString")).toBe(false);
  });

  it("iterates the same headers a copy would hold", () => {
    expect(Object.fromEntries(LiteHeaders.fromNode(raw()))).toEqual({
      "content-type": "application/json",
      "x-forwarded-for": "10.0.0.1, 10.0.0.2",
      authorization: "Bearer abc",
    });
  });

  it("keeps changes apart from Node's record", () => {
    const record = raw();
    const h = LiteHeaders.fromNode(record);
    h.set("Authorization", "Bearer other");
    h.append("x-forwarded-for", "10.0.0.3");
    h.delete("content-type");
    expect(h.get("authorization")).toBe("Bearer other");
    expect(h.get("x-forwarded-for")).toBe("10.0.0.1, 10.0.0.2, 10.0.0.3");
    expect(h.get("content-type")).toBeNull();
    expect(h.toRecord()).toEqual({
      "x-forwarded-for": "10.0.0.1, 10.0.0.2, 10.0.0.3",
      authorization: "Bearer other",
    });
    expect(record.authorization).toBe("Bearer abc");
    expect(record["content-type"]).toBe("application/json");
  });
});

describe("LiteHeaders.isEmpty", () => {
  it("says whether any header is held, made or read from Node's record", () => {
    const made = new LiteHeaders();
    expect(made.isEmpty()).toBe(true);
    expect(made.get("x-a")).toBeNull();
    made.set("x-a", "1");
    expect(made.isEmpty()).toBe(false);
    made.delete("x-a");
    expect(made.isEmpty()).toBe(true);
    expect(LiteHeaders.fromNode({ ":path": "/", empty: undefined }).isEmpty()).toBe(true);
    expect(LiteHeaders.fromNode({ ":path": "/", accept: "*/*" }).isEmpty()).toBe(false);
  });
});
