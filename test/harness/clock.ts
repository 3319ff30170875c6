import type { Clock } from "../../src/domain/clock.js";

/** A clock the test moves by hand: expiry and windows are tested without sleeping. */
export class TestClock implements Clock {
  constructor(private t: number = Date.now()) {}
  now(): number {
    return this.t;
  }
  /** Moves time forward by `ms`. */
  advance(ms: number): void {
    this.t += ms;
  }
  /** Jumps to an absolute time (Unix ms). */
  set(ms: number): void {
    this.t = ms;
  }
}
