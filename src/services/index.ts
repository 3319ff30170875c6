import type { ServiceImplSpec } from "@connectrpc/connect";
import { AnalyticsService } from "../../gen/latchkey/v2/analytics_pb.js";
import { ApisService } from "../../gen/latchkey/v2/apis_pb.js";
import { IdentitiesService } from "../../gen/latchkey/v2/identities_pb.js";
import { KeysService } from "../../gen/latchkey/v2/keys_pb.js";
import { LivenessService } from "../../gen/latchkey/v2/liveness_pb.js";
import { PermissionsService } from "../../gen/latchkey/v2/permissions_pb.js";
import { RatelimitService } from "../../gen/latchkey/v2/ratelimit_pb.js";
import { WebhooksService } from "../../gen/latchkey/v2/webhooks_pb.js";
import { analyticsService } from "./analytics/index.js";
import { apisService } from "./apis/index.js";
import type { Deps } from "./deps.js";
import { identitiesService } from "./identities/index.js";
import { keysService } from "./keys/index.js";
import { livenessService } from "./liveness/index.js";
import { permissionsService } from "./permissions/index.js";
import { ratelimitService } from "./ratelimit/index.js";
import { serve } from "./serve.js";
import { webhooksService } from "./webhooks/index.js";

/**
 * Every service Latchkey serves, assembled once and handed to every door. Refuses to start
 * (a TypeError naming the rpc) when an rpc has no handler or no procedure option, or a
 * handler has no rpc.
 */
export function createServices(deps: Deps): ServiceImplSpec[] {
  return [
    serve(LivenessService, livenessService()),
    serve(ApisService, apisService(deps)),
    serve(KeysService, keysService(deps)),
    serve(IdentitiesService, identitiesService(deps)),
    serve(PermissionsService, permissionsService(deps)),
    serve(RatelimitService, ratelimitService(deps)),
    serve(AnalyticsService, analyticsService(deps)),
    serve(WebhooksService, webhooksService(deps)),
  ];
}
