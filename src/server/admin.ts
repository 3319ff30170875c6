import type { ServerResponse } from "node:http";
import type { Readiness } from "../health/readiness.js";
import { answerJson, HEALTH_PATHS, healthRoutes } from "./health-routes.js";
import type { NodeRequest, NodeResponse } from "./node-io.js";

/** Every path the admin port answers. */
export const ADMIN_PATHS = ["/metrics", ...HEALTH_PATHS] as const;

/**
 * Where /metrics comes from: a prom-client Registry, or a primary's sum of its workers'
 * registries (cli/workers-admin.ts).
 */
export interface MetricsSource {
  readonly contentType: string;
  metrics(): Promise<string>;
}

/**
 * The admin port's handler: `GET /metrics` (Prometheus text) and the health endpoints.
 * The port is meant for the machine, the pod or the scraper, not the internet (ADMIN_HOST
 * defaults to 127.0.0.1), and the main port does not serve /metrics.
 */
export function createAdminHandler(metrics: MetricsSource, readiness: Readiness) {
  const health = healthRoutes(readiness);
  return (req: NodeRequest, res: NodeResponse): void => {
    if (health(req, res)) return;
    const url = req.url ?? "/";
    if (url !== "/metrics" && !url.startsWith("/metrics?")) {
      answerJson(res, 404, { error: `not found; this port serves ${ADMIN_PATHS.join(", ")}` });
      return;
    }
    if (req.method !== "GET") {
      res.setHeader("allow", "GET");
      answerJson(res, 405, { error: "/metrics answers GET only" });
      return;
    }
    metrics.metrics().then(
      (text) => {
        (res as ServerResponse).writeHead(200, { "content-type": metrics.contentType });
        res.end(text);
      },
      () => answerJson(res, 500, { error: "the metrics could not be collected" }),
    );
  };
}
