import type { ServerResponse } from "node:http";
import type { Readiness } from "../health/readiness.js";
import type { NodeRequest, NodeResponse } from "./node-io.js";

/** The paths of the health endpoints, answered to GET and HEAD. */
export const HEALTH_PATHS = ["/health/live", "/health/ready"] as const;

function pathOf(req: NodeRequest): string {
  const url = req.url ?? "/";
  const query = url.indexOf("?");
  return query === -1 ? url : url.slice(0, query);
}

/** Writes a small JSON answer that no cache may keep (a probe wants the state of now). */
export function answerJson(res: NodeResponse, status: number, body: unknown, head = false): void {
  const text = JSON.stringify(body);
  (res as ServerResponse).writeHead(status, {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(text),
    "cache-control": "no-store",
  });
  if (head) res.end();
  else res.end(text);
}

/**
 * The health endpoints: `/health/live` answers 200 whenever the process runs its event loop
 * (answering at all is the proof; it reads nothing), `/health/ready` 200 when the server can
 * answer calls and 503 naming the failing parts otherwise (`database`, `migrations`,
 * `redis`, `shutdown`), from the cached readiness report. Other methods are 405. Returns
 * false for any other path, leaving the request to the caller.
 */
export function healthRoutes(readiness: Readiness) {
  return (req: NodeRequest, res: NodeResponse): boolean => {
    const path = pathOf(req);
    if (path !== "/health/live" && path !== "/health/ready") return false;
    const head = req.method === "HEAD";
    if (req.method !== "GET" && !head) {
      res.setHeader("allow", "GET, HEAD");
      answerJson(res, 405, { error: `${path} answers GET and HEAD only` });
      return true;
    }
    if (path === "/health/live") {
      answerJson(res, 200, { status: "live" }, head);
      return true;
    }
    void readiness.report().then((report) => {
      if (res.writableEnded || res.destroyed) return;
      if (report.ready) answerJson(res, 200, { status: "ready" }, head);
      else answerJson(res, 503, { status: "not ready", failing: report.failing }, head);
    });
    return true;
  };
}
