import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { Inflight, type InflightEntry } from "../../../src/server/inflight.js";

describe("Inflight", () => {
  it("holds what a Set would, whatever the order of adds and removes (removes repeated too)", () => {
    fc.assert(
      fc.property(
        fc.array(fc.oneof(fc.constant("add" as const), fc.nat({ max: 50 })), { maxLength: 200 }),
        (ops) => {
          const list = new Inflight<number>();
          const model = new Set<number>();
          const entries: InflightEntry<number>[] = [];
          for (const op of ops) {
            if (op === "add") {
              entries.push(list.add(entries.length));
              model.add(entries.length - 1);
            } else if (op < entries.length) {
              const entry = entries[op] as InflightEntry<number>;
              expect(list.remove(entry)).toBe(model.delete(entry.item));
            }
            expect(list.size).toBe(model.size);
            expect([...list].sort((a, b) => a - b)).toEqual([...model].sort((a, b) => a - b));
          }
        },
      ),
    );
  });
});
