import type { ServerResponse } from "node:http";
import type { Metrics } from "../metrics.js";
import type { NodeRequest, NodeResponse } from "./node-io.js";

/** The doors a request can be routed to. */
export interface Doors {
  json: (req: NodeRequest, res: NodeResponse) => Promise<void>;
  connect: (req: NodeRequest, res: NodeResponse) => void;
  /** GET pages (API reference, error pages, OpenAPI); false when the path is not one. */
  pages?: (req: NodeRequest, res: NodeResponse) => boolean;
}

/**
 * Routes by path: `/latchkey.v2.*` to Connect (Connect, gRPC-web and gRPC),
 * `GET /metrics` to Prometheus, GET pages (`/docs`, `/openapi.json`, error pages), and
 * everything else to the /v2 door, which answers unknown paths with a 404 envelope.
 */
export function createRouter(doors: Doors, metrics: Metrics) {
  return (req: NodeRequest, res: NodeResponse): void => {
    const url = req.url ?? "/";
    if (url.startsWith("/latchkey.v2.")) {
      doors.connect(req, res);
      return;
    }
    if (req.method === "GET" && (url === "/metrics" || url.startsWith("/metrics?"))) {
      metrics.registry.metrics().then(
        (text) => {
          (res as ServerResponse).writeHead(200, { "content-type": metrics.registry.contentType });
          res.end(text);
        },
        () => {
          (res as ServerResponse).writeHead(500);
          res.end();
        },
      );
      return;
    }
    if (doors.pages?.(req, res)) return;
    void doors.json(req, res);
  };
}
