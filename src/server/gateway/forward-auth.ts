import type { ServerResponse } from "node:http";
import type { CidrSet } from "../../domain/networks.js";
import { headerOf, requestClientAddress } from "../forwarded-request.js";
import type { NodeRequest, NodeResponse } from "../node-io.js";
import type { GatewayAnswer } from "./answer.js";
import type { GatewayRequest } from "./exchange.js";

/**
 * The path of the forward-auth endpoint. Envoy's HTTP ext_authz appends the original path to
 * its path prefix, so the paths below it are the endpoint too.
 */
export const FORWARD_AUTH_PATH = "/v2/gateway/authorize";

/** Whether a request URL is the forward-auth endpoint's. */
export function isForwardAuth(url: string): boolean {
  if (!url.startsWith(FORWARD_AUTH_PATH)) return false;
  const next = url.charAt(FORWARD_AUTH_PATH.length);
  return next === "" || next === "/" || next === "?";
}

/**
 * The original request's method and path: from the headers gateways set (Traefik and Caddy
 * `X-Forwarded-Method` and `X-Forwarded-Uri`, nginx configurations `X-Original-Method` and
 * `X-Original-URI`), else this request's own (nginx's auth_request keeps the original method;
 * Envoy's HTTP ext_authz keeps it and appends the original path to the endpoint's).
 */
function originalRequest(req: NodeRequest): { method: string; path: string } {
  const method =
    headerOf(req, "x-forwarded-method") ?? headerOf(req, "x-original-method") ?? req.method ?? "";
  const own = (req.url ?? "").slice(FORWARD_AUTH_PATH.length);
  const path =
    headerOf(req, "x-forwarded-uri") ??
    headerOf(req, "x-original-uri") ??
    (own.startsWith("/") ? own : "");
  return { method, path };
}

/** Writes an answer: the upstream and client headers, and the body of a refusal. */
function send(req: NodeRequest, res: NodeResponse, answer: GatewayAnswer): void {
  const headers: Record<string, string> = { ...answer.upstream, ...answer.client };
  // Envoy's HTTP ext_authz strips from the upstream request the headers named here.
  if (answer.status === 200 && answer.absent.length > 0) {
    headers["x-envoy-auth-headers-to-remove"] = answer.absent.join(", ");
  }
  if (answer.body !== "") headers["content-type"] = "application/json";
  headers["content-length"] = String(Buffer.byteLength(answer.body));
  // A body is never read here (gateways send none): on HTTP/1.1 the connection closes after
  // the answer rather than reading whatever was sent to find the next request.
  const hasBody =
    req.headers["transfer-encoding"] !== undefined ||
    Number(req.headers["content-length"] ?? 0) > 0;
  if (hasBody && !("stream" in res)) headers.connection = "close";
  (res as ServerResponse).writeHead(answer.status, headers);
  if (req.method === "HEAD") res.end();
  else res.end(answer.body);
}

/**
 * The forward-auth endpoint (nginx `auth_request`, Traefik ForwardAuth, Caddy forward_auth,
 * Envoy's ext_authz in HTTP mode): `/v2/gateway/authorize` with any method (gateways send
 * the original request's, or GET). The gateway authenticates with its root key in
 * `X-Latchkey-Root-Key` and sets the policy headers (gateway-policy.ts); the end user's key
 * and the forwarded headers come from the original request. The client's address is the
 * connection's peer, or what `X-Forwarded-For` says through TRUSTED_PROXIES only.
 */
export function createForwardAuth(
  authorize: (r: GatewayRequest) => Promise<GatewayAnswer>,
  trustedProxies: CidrSet,
) {
  return async (req: NodeRequest, res: NodeResponse): Promise<void> => {
    const rootKey = headerOf(req, "x-latchkey-root-key")?.trim();
    const { method, path } = originalRequest(req);
    const answer = await authorize({
      door: "forward-auth",
      authorization: rootKey ? `Bearer ${rootKey}` : undefined,
      rootKeyHow: "send it in the X-Latchkey-Root-Key header",
      header: (name) => headerOf(req, name),
      clientIp: requestClientAddress(req, trustedProxies),
      method,
      path,
    });
    if (res.headersSent) return;
    send(req, res, answer);
  };
}
