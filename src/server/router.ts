import { isForwardAuth } from "./gateway/forward-auth.js";
import type { NodeRequest, NodeResponse } from "./node-io.js";

/** The doors a request can be routed to. */
export interface Doors {
  json: (req: NodeRequest, res: NodeResponse) => Promise<void>;
  connect: (req: NodeRequest, res: NodeResponse) => void;
  /** GET pages (API reference, error pages, OpenAPI); false when the path is not one. */
  pages?: (req: NodeRequest, res: NodeResponse) => boolean;
  /** The web console: its session endpoints and files under /console; false when not one. */
  console?: (req: NodeRequest, res: NodeResponse) => boolean;
  /** The health endpoints (`/health/live`, `/health/ready`); false when the path is not one. */
  health?: (req: NodeRequest, res: NodeResponse) => boolean;
  /** The secret-scanning receiver, when configured; false when the path is not its own. */
  secretScanning?: (req: NodeRequest, res: NodeResponse) => boolean;
  /** The gateways' forward-auth endpoint, `/v2/gateway/authorize` (gateway/forward-auth.ts). */
  gateway?: (req: NodeRequest, res: NodeResponse) => Promise<void>;
}

/**
 * Routes by path: `/latchkey.v2.*` to Connect (Connect, gRPC-web and gRPC), the gateways'
 * forward-auth endpoint (any method), the health endpoints, the secret-scanning receiver
 * (when configured), the web console (`/console`), GET pages (`/docs`, `/openapi.json`, error
 * pages), and everything else to the /v2 door, which answers unknown paths with a 404
 * envelope. `/metrics` is not here: it is
 * served on the admin port only.
 */
export function createRouter(doors: Doors) {
  return (req: NodeRequest, res: NodeResponse): void => {
    const url = req.url ?? "/";
    if (url.startsWith("/latchkey.v2.")) {
      doors.connect(req, res);
      return;
    }
    if (doors.gateway && isForwardAuth(url)) {
      doors.gateway(req, res).catch(() => res.destroy());
      return;
    }
    if (url.startsWith("/health/") && doors.health?.(req, res)) return;
    if (url.startsWith("/v2/secret-scanning/") && doors.secretScanning?.(req, res)) return;
    if (url.startsWith("/console") && doors.console?.(req, res)) return;
    if (doors.pages?.(req, res)) return;
    void doors.json(req, res);
  };
}

type Route = (req: NodeRequest, res: NodeResponse) => boolean;

/** The console's routes in order: the first that takes the request answers it. */
export function consoleRoutes(...routes: Route[]): Route {
  return (req, res) => routes.some((route) => route(req, res));
}
