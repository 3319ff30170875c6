import { describe, expect, it } from "vitest";
import { parseQuery } from "../../../src/domain/permission-query.js";
import { planLimits, visibleIdentityLimits } from "../../../src/domain/ratelimit-plan.js";
import { statusVerdict } from "../../../src/domain/verification.js";
import { windowAt } from "../../../src/domain/windows.js";

describe("status verdict", () => {
  const ok = { enabled: true, expiresAt: null, permissions: ["a.read"] };
  it.each([
    ["a valid key", ok, undefined, undefined],
    ["a disabled key", { ...ok, enabled: false }, undefined, "DISABLED"],
    [
      "a disabled, expired key without the permission",
      { enabled: false, expiresAt: 0, permissions: [] },
      "a.read",
      "DISABLED",
    ],
    [
      "an expired key without the permission",
      { ...ok, expiresAt: 999, permissions: [] },
      "a.read",
      "EXPIRED",
    ],
    ["a key at its exact expiry", { ...ok, expiresAt: 1000 }, undefined, undefined],
    ["a key past its expiry by 1 ms", { ...ok, expiresAt: 999 }, undefined, "EXPIRED"],
    ["a key without the queried permission", ok, "a.write", "INSUFFICIENT_PERMISSIONS"],
    ["a key with it", ok, "a.read OR b", undefined],
  ] as const)("%s", (_, key, query, code) => {
    expect(statusVerdict(key, query ? parseQuery(query) : undefined, 1000)).toBe(code);
  });

  it.each([
    ["a key used from outside its network rule", ok, undefined, "FORBIDDEN"],
    ["the same key, without the queried permission too", ok, "a.write", "FORBIDDEN"],
    ["a disabled key used from outside", { ...ok, enabled: false }, undefined, "DISABLED"],
    ["an expired key used from outside", { ...ok, expiresAt: 999 }, undefined, "EXPIRED"],
  ] as const)("%s", (_, key, query, code) => {
    expect(statusVerdict(key, query ? parseQuery(query) : undefined, 1000, false)).toBe(code);
  });
});

describe("fixed windows", () => {
  it.each([
    [0, 1000, 0, 1000],
    [999, 1000, 0, 1000],
    [1000, 1000, 1000, 2000],
    [
      Date.parse("2026-01-01T10:30:00Z"),
      3_600_000,
      Date.parse("2026-01-01T10:00:00Z"),
      Date.parse("2026-01-01T11:00:00Z"),
    ],
  ])("at %i with %i ms: [%i, %i)", (now, d, start, reset) => {
    expect(windowAt(now, d)).toEqual({ start, reset });
  });
});

describe("rate-limit plan", () => {
  const key = [
    { id: "rl_k1", name: "requests", limit: 10, durationMs: 1000, autoApply: true },
    { id: "rl_k2", name: "heavy", limit: 2, durationMs: 60000, autoApply: false },
  ];
  const identity = [
    { id: "rl_i1", name: "requests", limit: 100, durationMs: 1000, autoApply: true },
    { id: "rl_i2", name: "shared", limit: 50, durationMs: 3600000, autoApply: true },
  ];
  const req = (
    name: string,
    extra: Partial<{ cost: number; limit: number; durationMs: number }> = {},
  ) => ({
    name,
    cost: extra.cost,
    limit: extra.limit,
    durationMs: extra.durationMs,
  });

  it("applies auto-applied limits, the key's shadowing the identity's", () => {
    const { planned } = planLimits(key, identity, [], "key_1", "id_1");
    expect(planned?.map((p) => [p.id, p.scope, p.owner, p.cost])).toEqual([
      ["rl_k1", "key", "key_1", 1],
      ["rl_i2", "identity", "id_1", 1],
    ]);
  });

  it("adds requested limits with their cost, once, and ad-hoc ones per key", () => {
    const { planned } = planLimits(
      key,
      identity,
      [
        req("heavy", { cost: 2 }),
        req("requests", { cost: 3 }),
        req("adhoc", { limit: 5, durationMs: 1000 }),
      ],
      "key_1",
      "id_1",
    );
    expect(planned?.map((p) => [p.id, p.name, p.cost, p.autoApply])).toEqual([
      ["rl_k1", "requests", 3, true],
      ["rl_i2", "shared", 1, true],
      ["rl_k2", "heavy", 2, false],
      ["", "adhoc", 1, false],
    ]);
  });

  it("never lets a requested limit and duration widen a configured limit of the same name", () => {
    const { planned } = planLimits(
      key,
      identity,
      [
        req("heavy", { cost: 2, limit: 1000, durationMs: 1000 }),
        req("shared", { limit: 1_000_000, durationMs: 1000 }),
        req("requests", { limit: 1000, durationMs: 60_000 }),
      ],
      "key_1",
      "id_1",
    );
    expect(
      planned?.map((p) => [p.id, p.name, p.limit, p.durationMs, p.cost, p.scope, p.owner]),
    ).toEqual([
      ["rl_k1", "requests", 10, 1000, 1, "key", "key_1"],
      ["rl_i2", "shared", 50, 3600000, 1, "identity", "id_1"],
      ["rl_k2", "heavy", 2, 60000, 2, "key", "key_1"],
    ]);
  });

  it("reports an unknown name without limit and duration, and ignores a lone limit", () => {
    expect(planLimits(key, identity, [req("nope")], "key_1", "id_1")).toEqual({ unknown: "nope" });
    expect(planLimits(key, identity, [req("nope", { limit: 5 })], "key_1", "id_1")).toEqual({
      unknown: "nope",
    });
  });

  it("ignores identity limits without an identity, and hides shadowed ones", () => {
    expect(planLimits([], identity, [], "key_1", null).planned).toEqual([]);
    expect(visibleIdentityLimits(identity, key).map((l) => l.name)).toEqual(["shared"]);
  });
});
