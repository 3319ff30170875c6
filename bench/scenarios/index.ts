// The scenarios, in the order `npm run bench` runs them.
import type { Scenario } from "../lib/scenario.ts";
import analytics from "./analytics.ts";
import codec from "./codec.ts";
import connections from "./connections.ts";
import creditsOnce from "./credits-once.ts";
import decodeValidate from "./decode-validate.ts";
import eventWriter from "./event-writer.ts";
import footprint from "./footprint.ts";
import gateway from "./gateway.ts";
import getApi from "./get-api.ts";
import internals from "./internals.ts";
import keys from "./keys.ts";
import noisyNeighbour from "./noisy-neighbour/index.ts";
import pgliteHostile from "./pglite-hostile.ts";
import ratelimit from "./ratelimit.ts";
import soak from "./soak/index.ts";
import verify from "./verify/index.ts";
import verifyAb from "./verify-ab.ts";
import webhooks from "./webhooks.ts";
import workers from "./workers.ts";

export const scenarios: readonly Scenario<object, unknown>[] = [
  getApi,
  keys,
  verify,
  verifyAb,
  workers,
  creditsOnce,
  eventWriter,
  ratelimit,
  gateway,
  analytics,
  webhooks,
  connections,
  noisyNeighbour,
  pgliteHostile,
  decodeValidate,
  internals,
  codec,
  footprint,
  soak,
];
