import type { ServiceImpl } from "@connectrpc/connect";
import type { AnalyticsService } from "../../../gen/latchkey/v2/analytics_pb.js";
import type { Deps } from "../deps.js";
import { getCreditUsage } from "./get-credit-usage.js";
import { getVerifications } from "./get-verifications.js";
import { listAuditLogs } from "./list-audit-logs.js";

/** The AnalyticsService implementation. */
export function analyticsService(deps: Deps): ServiceImpl<typeof AnalyticsService> {
  return {
    getCreditUsage: (req, ctx) => getCreditUsage(deps, req, ctx),
    getVerifications: (req, ctx) => getVerifications(deps, req, ctx),
    listAuditLogs: (req, ctx) => listAuditLogs(deps, req, ctx),
  };
}
