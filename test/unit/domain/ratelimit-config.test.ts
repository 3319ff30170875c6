import { describe, expect, it } from "vitest";
import { diffRatelimits } from "../../../src/domain/ratelimit-config.js";

const s = (id: string, name: string, limit = 10, durationMs = 1000, autoApply = true) => ({
  id,
  name,
  limit,
  durationMs,
  autoApply,
});

describe("replacing configured rate limits", () => {
  it("keeps ids of kept names, updates changed values, creates new names and removes gone ones", () => {
    const diff = diffRatelimits(
      [s("rl_a", "a"), s("rl_b", "b"), s("rl_c", "c")],
      [
        { name: "a", limit: 10, durationMs: 1000, autoApply: true },
        { name: "b", limit: 20, durationMs: 1000, autoApply: true },
        { name: "d", limit: 5, durationMs: 60000, autoApply: false },
      ],
    );
    expect(diff.update).toEqual([s("rl_b", "b", 20)]);
    expect(diff.create).toEqual([{ name: "d", limit: 5, durationMs: 60000, autoApply: false }]);
    expect(diff.remove).toEqual([s("rl_c", "c")]);
  });

  it("removes everything for an empty list and changes nothing for the same list", () => {
    expect(diffRatelimits([s("rl_a", "a")], []).remove).toHaveLength(1);
    const same = diffRatelimits(
      [s("rl_a", "a")],
      [{ name: "a", limit: 10, durationMs: 1000, autoApply: true }],
    );
    expect(same).toEqual({ create: [], update: [], remove: [] });
  });
});
