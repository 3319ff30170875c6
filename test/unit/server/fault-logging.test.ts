import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { catalog } from "../../../src/errors/catalog.js";
import { errors } from "../../../src/errors/service-error.js";
import { createLogger } from "../../../src/log.js";
import { toServiceError } from "../../../src/server/interceptors/request-context.js";

/** A real logger at debug level whose JSON lines are kept for the test to read. */
function capturedLogger() {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split("\n")) if (line) lines.push(JSON.parse(line));
      done();
    },
  });
  const log = createLogger("debug", sink);
  const faults = () => lines.filter((l) => l.msg === "unexpected error");
  return { log, faults };
}

describe("a 500 answered to a request is logged with its cause", () => {
  it("a fault thrown as errors.unexpected(cause) logs the cause under the request id, once", () => {
    const { log, faults } = capturedLogger();
    const thrown = errors.unexpected(new Error("credits holder key_x of key_y is missing"));
    const first = toServiceError(thrown, log, "req_fault_1");
    // A door converts what its interceptor rethrew: the same fault is not logged twice.
    const again = toServiceError(first, log, "req_fault_1");
    expect(again).toBe(thrown);
    expect(faults()).toHaveLength(1);
    const [line] = faults() as [Record<string, unknown>];
    expect(line.level).toBe(50);
    expect(line.requestId).toBe("req_fault_1");
    expect((line.err as { message: string }).message).toBe(
      "credits holder key_x of key_y is missing",
    );
  });

  it("anything else thrown becomes the catalog's 500 and is logged once with what was thrown", () => {
    const { log, faults } = capturedLogger();
    const first = toServiceError(new RangeError("out of range"), log, "req_fault_2");
    toServiceError(first, log, "req_fault_2");
    expect(first.entry).toBe(catalog.unexpectedError);
    expect(faults()).toHaveLength(1);
    const [line] = faults() as [Record<string, unknown>];
    expect((line.err as { message: string }).message).toBe("out of range");
  });

  it("an error of the request (4xx) is not logged as a fault", () => {
    const { log, faults } = capturedLogger();
    toServiceError(errors.keyNotFound(), log, "req_fault_3");
    toServiceError(errors.badField("/keyId", "is required"), log, "req_fault_3");
    expect(faults()).toHaveLength(0);
  });
});
