import { createServiceImplSpec, type ServiceImplSpec } from "@connectrpc/connect";
import { AnalyticsService } from "../../gen/latchkey/v2/analytics_pb.js";
import { ApisService } from "../../gen/latchkey/v2/apis_pb.js";
import { IdentitiesService } from "../../gen/latchkey/v2/identities_pb.js";
import { KeysService } from "../../gen/latchkey/v2/keys_pb.js";
import { LivenessService } from "../../gen/latchkey/v2/liveness_pb.js";
import { PermissionsService } from "../../gen/latchkey/v2/permissions_pb.js";
import { RatelimitService } from "../../gen/latchkey/v2/ratelimit_pb.js";
import { analyticsService } from "./analytics/index.js";
import { apisService } from "./apis/index.js";
import type { Deps } from "./deps.js";
import { identitiesService } from "./identities/index.js";
import { keysService } from "./keys/index.js";
import { livenessService } from "./liveness/index.js";
import { permissionsService } from "./permissions/index.js";
import { procedureOf } from "./procedures.js";
import { ratelimitService } from "./ratelimit/index.js";

/**
 * Every service Latchkey serves, assembled once and handed to every door. Checks at
 * start that each RPC has its row in the procedures table.
 */
export function createServices(deps: Deps): ServiceImplSpec[] {
  const specs = [
    createServiceImplSpec<typeof LivenessService>(LivenessService, livenessService()),
    createServiceImplSpec<typeof ApisService>(ApisService, apisService(deps)),
    createServiceImplSpec<typeof KeysService>(KeysService, keysService(deps)),
    createServiceImplSpec<typeof IdentitiesService>(IdentitiesService, identitiesService(deps)),
    createServiceImplSpec<typeof PermissionsService>(PermissionsService, permissionsService(deps)),
    createServiceImplSpec<typeof RatelimitService>(RatelimitService, ratelimitService(deps)),
    createServiceImplSpec<typeof AnalyticsService>(AnalyticsService, analyticsService(deps)),
  ];
  for (const spec of specs) for (const m of spec.service.methods) procedureOf(m);
  return specs;
}
