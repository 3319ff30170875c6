import type { Examples } from "./example.ts";

/** Examples of the liveness namespace. */
export const LIVENESS_EXAMPLES: Examples = {
  "liveness.check": {
    request: {},
    response: { data: { message: "Latchkey is alive." } },
  },
};
