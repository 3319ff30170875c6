import { describe, expect, it } from "vitest";
import {
  FIRST_RESTART_DELAY_MS,
  MAX_RESTART_DELAY_MS,
  restartDelayMs,
} from "../../../src/cli/worker-restarts.js";

describe("restartDelayMs", () => {
  it("doubles with each crash in a row, up to a bound, so a crash loop does not spin", () => {
    expect(restartDelayMs(0)).toBe(FIRST_RESTART_DELAY_MS);
    expect(restartDelayMs(1)).toBe(2 * FIRST_RESTART_DELAY_MS);
    expect(restartDelayMs(3)).toBe(8 * FIRST_RESTART_DELAY_MS);
    expect(restartDelayMs(10)).toBe(MAX_RESTART_DELAY_MS);
    expect(restartDelayMs(10_000)).toBe(MAX_RESTART_DELAY_MS);
  });
});
