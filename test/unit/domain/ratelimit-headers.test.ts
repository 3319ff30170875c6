import { describe, expect, it } from "vitest";
import {
  type LimitWindow,
  MAX_FIELD_LENGTH,
  rateLimitFields,
  retryAfterSeconds,
  sfString,
} from "../../../src/domain/ratelimit-headers.js";

const NOW = 1_800_000_000_000;
const limit = (over: Partial<LimitWindow> = {}): LimitWindow => ({
  name: "requests",
  limit: 100,
  durationMs: 60_000,
  remaining: 42,
  resetMs: NOW + 17_000,
  exceeded: false,
  ...over,
});

describe("RateLimit-Policy and RateLimit", () => {
  it("writes one Structured Field list item per limit, as the draft's examples do", () => {
    expect(
      rateLimitFields(
        [
          limit(),
          limit({ name: "burst", limit: 10, durationMs: 1000, remaining: 9, resetMs: NOW + 400 }),
        ],
        NOW,
      ),
    ).toEqual({
      policy: '"requests";q=100;w=60, "burst";q=10;w=1',
      current: '"requests";r=42;t=17, "burst";r=9;t=1',
    });
  });

  it("is absent when no limit was evaluated", () => {
    expect(rateLimitFields([], NOW)).toBeUndefined();
  });

  it("rounds a window of part of a second up, and a past reset to 0", () => {
    const fields = rateLimitFields([limit({ durationMs: 1500, resetMs: NOW - 5 })], NOW);
    expect(fields).toEqual({ policy: '"requests";q=100;w=2', current: '"requests";r=42;t=0' });
  });

  it("caps integers at the 15 digits a Structured Field Integer may have", () => {
    const fields = rateLimitFields([limit({ limit: 2 ** 53 - 1, remaining: 2 ** 53 - 2 })], NOW);
    expect(fields?.policy).toBe('"requests";q=999999999999999;w=60');
    expect(fields?.current).toBe('"requests";r=999999999999999;t=17');
  });

  it("lists only the limits that fit in the field's bound", () => {
    const many = Array.from({ length: 100 }, (_, i) => limit({ name: `${"n".repeat(500)}${i}` }));
    const fields = rateLimitFields(many, NOW);
    expect(fields?.policy.length).toBeLessThanOrEqual(MAX_FIELD_LENGTH);
    expect(fields?.current.length).toBeLessThanOrEqual(MAX_FIELD_LENGTH);
    const items = fields?.policy.split(", ") ?? [];
    expect(items.length).toBe(fields?.current.split(", ").length);
    expect(items.length).toBeGreaterThan(0);
    expect(items.length).toBeLessThan(100);
  });
});

describe("Structured Field strings", () => {
  it.each([
    ["requests", '"requests"'],
    ['a"b\\c', '"a\\"b\\\\c"'],
    ["café", '"caf%C3%A9"'],
    ["50%", '"50%25"'],
    ["tab\there", '"tab%09here"'],
  ])("%j is %s", (text, written) => {
    expect(sfString(text)).toBe(written);
  });
});

describe("Retry-After", () => {
  it("is the time until the last refusing limit has a new window, at least a second", () => {
    const limits = [
      limit({ exceeded: true, resetMs: NOW + 2_100 }),
      limit({ exceeded: true, resetMs: NOW + 30_000 }),
      limit({ exceeded: false, resetMs: NOW + 90_000 }),
    ];
    expect(retryAfterSeconds(limits, NOW)).toBe(30);
    expect(retryAfterSeconds([limit({ exceeded: true, resetMs: NOW })], NOW)).toBe(1);
  });

  it("is absent when no limit refused", () => {
    expect(retryAfterSeconds([limit()], NOW)).toBeUndefined();
  });
});
