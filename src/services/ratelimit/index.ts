import type { ServiceImpl } from "@connectrpc/connect";
import type { RatelimitService } from "../../../gen/latchkey/v2/ratelimit_pb.js";
import type { Deps } from "../deps.js";
import { deleteOverride } from "./delete-override.js";
import { getOverride } from "./get-override.js";
import { limit } from "./limit.js";
import { listOverrides } from "./list-overrides.js";
import { multiLimit } from "./multi-limit.js";
import { setOverride } from "./set-override.js";

/** The RatelimitService implementation. */
export function ratelimitService(deps: Deps): ServiceImpl<typeof RatelimitService> {
  return {
    limit: (req, ctx) => limit(deps, req, ctx),
    multiLimit: (req, ctx) => multiLimit(deps, req, ctx),
    setOverride: (req, ctx) => setOverride(deps, req, ctx),
    getOverride: (req, ctx) => getOverride(deps, req, ctx),
    listOverrides: (req, ctx) => listOverrides(deps, req, ctx),
    deleteOverride: (req, ctx) => deleteOverride(deps, req, ctx),
  };
}
