/**
 * The ids of the OpenAPI document's examples, swapped for those a real server hands out, so
 * that the examples can be sent one after the other as a first session would send them.
 */

/**
 * Walks an example answer and the real answer to the same request side by side, and maps
 * every string of the example that the real answer has another value for in the same place
 * (an id, a secret, a cursor). A string mapped already keeps its first mapping: it was
 * learned from the answer that created the object.
 */
export function learnIds(example: unknown, actual: unknown, ids: Map<string, string>): void {
  if (typeof example === "string") {
    if (typeof actual === "string" && actual !== example && !ids.has(example))
      ids.set(example, actual);
    return;
  }
  if (example === null || typeof example !== "object" || actual === null) return;
  if (typeof actual !== "object") return;
  if (Array.isArray(example)) {
    if (!Array.isArray(actual)) return;
    for (const [i, item] of example.entries()) learnIds(item, actual[i], ids);
    return;
  }
  const real = actual as Record<string, unknown>;
  for (const [key, value] of Object.entries(example)) learnIds(value, real[key], ids);
}

/** A copy of a JSON value with every string that `ids` maps replaced by its real value. */
export function withRealIds(value: unknown, ids: ReadonlyMap<string, string>): unknown {
  if (typeof value === "string") return ids.get(value) ?? value;
  if (Array.isArray(value)) return value.map((item) => withRealIds(item, ids));
  if (value === null || typeof value !== "object") return value;
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, withRealIds(v, ids)]));
}
