import { describe, expect, it } from "vitest";
import { readPolicy } from "../../../src/domain/gateway-policy.js";

const read = (headers: Record<string, string>) =>
  readPolicy((name) => ({ "x-latchkey-api-id": "api_1", ...headers })[name]);

describe("the gateway policy headers", () => {
  it("reads every header", () => {
    expect(
      read({
        "x-latchkey-permissions": "docs.read AND (a OR b)",
        "x-latchkey-cost": "25",
        "x-latchkey-ratelimits": " requests , burst;limit=10;duration=1000;cost=2, heavy;cost=0",
      }),
    ).toEqual({
      policy: {
        apiId: "api_1",
        permissions: "docs.read AND (a OR b)",
        cost: 25,
        ratelimits: [
          { name: "requests" },
          { name: "burst", limit: 10, durationMs: 1000, cost: 2 },
          { name: "heavy", cost: 0 },
        ],
      },
      violations: [],
    });
  });

  it("takes empty headers as absent", () => {
    expect(
      read({ "x-latchkey-permissions": " ", "x-latchkey-cost": "", "x-latchkey-ratelimits": "" }),
    ).toEqual({ policy: { apiId: "api_1", ratelimits: [] }, violations: [] });
  });

  it("names each malformed header", () => {
    const { violations } = read({
      "x-latchkey-api-id": "",
      "x-latchkey-permissions": "(",
      "x-latchkey-cost": "1e3",
      "x-latchkey-ratelimits": "x",
    });
    expect(violations.map((v) => v.location)).toEqual([
      "X-Latchkey-Api-Id",
      "X-Latchkey-Permissions",
      "X-Latchkey-Cost",
      "X-Latchkey-Ratelimits",
    ]);
  });

  it.each([
    ["9007199254740991", true],
    ["9007199254740992", false],
  ])("bounds an ad-hoc limit: %s is %s", (limit, ok) => {
    const { violations } = read({ "x-latchkey-ratelimits": `a1b;limit=${limit};duration=1000` });
    expect(violations.length === 0).toBe(ok);
  });
});
