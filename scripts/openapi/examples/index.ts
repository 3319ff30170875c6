import { ANALYTICS_EXAMPLES } from "./analytics.ts";
import { API_EXAMPLES } from "./apis.ts";
import type { Example, Examples } from "./example.ts";
import { IDENTITY_EXAMPLES } from "./identities.ts";
import { KEY_EXAMPLES } from "./keys.ts";
import { LIVENESS_EXAMPLES } from "./liveness.ts";
import { PERMISSION_EXAMPLES } from "./permissions.ts";
import { RATELIMIT_EXAMPLES } from "./ratelimit.ts";
import { WEBHOOK_EXAMPLES } from "./webhooks.ts";

export { type Example, type Examples, IDS } from "./example.ts";

/** Every procedure's example, by procedure name; a namespace's are in `<namespace>.ts` here. */
export const EXAMPLES: Examples = {
  ...ANALYTICS_EXAMPLES,
  ...API_EXAMPLES,
  ...IDENTITY_EXAMPLES,
  ...KEY_EXAMPLES,
  ...LIVENESS_EXAMPLES,
  ...PERMISSION_EXAMPLES,
  ...RATELIMIT_EXAMPLES,
  ...WEBHOOK_EXAMPLES,
};

/**
 * The example of a procedure. Throws for a procedure without one, so that `buf generate`
 * fails until a new procedure documents a request and its answer.
 */
export function exampleOf(procedure: string): Example {
  const example = Object.hasOwn(EXAMPLES, procedure) ? EXAMPLES[procedure] : undefined;
  if (example === undefined) {
    const namespace = procedure.slice(0, procedure.indexOf("."));
    throw new Error(
      `${procedure} has no example: add its request and 200 answer to scripts/openapi/examples/${namespace}.ts`,
    );
  }
  return example;
}
