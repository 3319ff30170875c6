import { describe, expect, it } from "vitest";
import { AttemptWindow, MAX_TRACKED_ADDRESSES } from "../../../src/domain/sign-in-bounds.js";

describe("sign-in attempt windows", () => {
  it("admit `perAddress` attempts per address and minute, then the next minute again", () => {
    const w = new AttemptWindow(3, 1_000);
    const t = 1_800_000_000_000;
    for (let i = 0; i < 3; i++) expect(w.admit("a", t + i)).toBe(true);
    expect(w.admit("a", t + 10)).toBe(false);
    expect(w.admit("b", t + 10)).toBe(true);
    expect(w.retryAfterMs(t + 10)).toBe(60_000 - ((t + 10) % 60_000));
    const next = t - (t % 60_000) + 60_000;
    expect(w.admit("a", next)).toBe(true);
  });

  it("admit `total` attempts from all addresses together", () => {
    const w = new AttemptWindow(5, 4);
    const t = 1_800_000_000_000;
    for (let i = 0; i < 4; i++) expect(w.admit(`addr${i}`, t)).toBe(true);
    expect(w.admit("another", t)).toBe(false);
  });

  it("track a bounded number of addresses; the rest share one count", () => {
    const w = new AttemptWindow(2, 10 * MAX_TRACKED_ADDRESSES);
    const t = 1_800_000_000_000;
    for (let i = 0; i < MAX_TRACKED_ADDRESSES; i++) expect(w.admit(`a${i}`, t)).toBe(true);
    // Addresses beyond the bound count together: two attempts among all of them.
    expect(w.admit("new1", t)).toBe(true);
    expect(w.admit("new2", t)).toBe(true);
    expect(w.admit("new3", t)).toBe(false);
    // A tracked address keeps its own count.
    expect(w.admit("a0", t)).toBe(true);
    expect(w.admit("a0", t)).toBe(false);
  });
});
