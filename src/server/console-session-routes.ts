import type { ServerResponse } from "node:http";
import {
  CSRF_HEADER,
  clearedSessionCookies,
  cookieMaxAgeS,
  csrfTokenMatches,
  csrfTokenOf,
  sessionCookie,
  sessionSecretOf,
} from "../domain/console-session.js";
import { newId } from "../domain/ids.js";
import { AttemptWindow } from "../domain/sign-in-bounds.js";
import { errors, type ServiceError } from "../errors/service-error.js";
import type { Principal } from "../services/call.js";
import { resolveSession, signIn, signOut } from "../services/console-sessions.js";
import type { Deps } from "../services/deps.js";
import { errorEnvelope } from "./error-envelope.js";
import { errorType, toServiceError } from "./interceptors/request-context.js";
import { isJsonContentType } from "./json-door.js";
import { BodyTooLargeError, type NodeRequest, type NodeResponse, readBody } from "./node-io.js";
import { PAGE_HEADERS } from "./page-headers.js";

/** The sign-in body is one root key: a few hundred bytes are plenty. */
const SIGN_IN_MAX_BYTES = 4096;
/** The longest root key a sign-in reads (longer cannot be one Latchkey made or accepts). */
const ROOT_KEY_MAX_LENGTH = 512;

/** What the console learns about its session: enough to show and to call, never the key. */
function sessionView(principal: Principal, secret: string, expiresAt: number, idleS: number) {
  return {
    rootKeyId: principal.rootKeyId,
    workspaceId: principal.workspaceId,
    permissions: [...principal.permissions],
    csrfToken: csrfTokenOf(secret),
    expiresAt,
    idleTimeoutS: idleS,
  };
}

/**
 * The console's session endpoints, beside its files under /console:
 * `POST /console/api/sign-in` takes `{"rootKey": "..."}` once and answers a session cookie
 * (HttpOnly, SameSite=Strict, Secure over TLS) and the session's CSRF token;
 * `GET /console/api/session` answers the current session (the console asks on load);
 * `POST /console/api/sign-out` deletes the session. Errors use the /v2 envelope.
 * Returns false when the path is not one of them.
 */
export function createConsoleSessionRoutes(deps: Deps) {
  const { config } = deps;
  const attempts = new AttemptWindow(
    config.consoleSignInsPerMinute,
    config.consoleSignInsPerMinute * 100,
  );
  const idleS = config.consoleSessionIdleS;

  const fail = (res: NodeResponse, requestId: string, err: ServiceError, extra = {}) => {
    const headers: Record<string, string | string[]> = {
      "x-request-id": requestId,
      "cache-control": "no-store",
      ...PAGE_HEADERS,
      ...extra,
    };
    send(
      res,
      err.entry.status,
      errorEnvelope(err, requestId, errorType(config.docsUrl, err)),
      headers,
    );
  };

  const handleSignIn = async (req: NodeRequest, res: NodeResponse, requestId: string) => {
    const now = deps.clock.now();
    if (!attempts.admit(clientAddress(req, config.trustProxy), now)) {
      deps.metrics.consoleSignIns.inc({ outcome: "limited" });
      const retry = String(Math.ceil(attempts.retryAfterMs(now) / 1000));
      fail(res, requestId, errors.signInRateLimited(), { "retry-after": retry });
      return;
    }
    const secure = isSecure(req, config.trustProxy);
    let session: Awaited<ReturnType<typeof signIn>>;
    try {
      session = await signIn(deps, await readSignIn(req));
    } catch (err) {
      deps.metrics.consoleSignIns.inc({ outcome: "refused" });
      throw err;
    }
    deps.metrics.consoleSignIns.inc({ outcome: "ok" });
    send(
      res,
      200,
      {
        meta: { requestId },
        data: sessionView(session.principal, session.secret, session.expiresAt, idleS),
      },
      {
        "x-request-id": requestId,
        "cache-control": "no-store",
        "set-cookie": sessionCookie(
          session.secret,
          cookieMaxAgeS(session.expiresAt, deps.clock.now()),
          secure,
        ),
        ...PAGE_HEADERS,
      },
    );
  };

  const handleSession = async (req: NodeRequest, res: NodeResponse, requestId: string) => {
    const secret = sessionSecretOf(req.headers.cookie);
    if (secret === undefined) throw errors.consoleSessionEnded();
    const { principal, expiresAt } = await resolveSession(deps, secret);
    send(
      res,
      200,
      { meta: { requestId }, data: sessionView(principal, secret, expiresAt, idleS) },
      { "x-request-id": requestId, "cache-control": "no-store", ...PAGE_HEADERS },
    );
  };

  const handleSignOut = async (req: NodeRequest, res: NodeResponse, requestId: string) => {
    const secret = sessionSecretOf(req.headers.cookie);
    if (secret !== undefined) {
      const sent = req.headers[CSRF_HEADER];
      if (!csrfTokenMatches(secret, typeof sent === "string" ? sent : undefined))
        throw errors.consoleCsrfMissing();
      await signOut(deps, secret);
    }
    send(
      res,
      200,
      { meta: { requestId }, data: {} },
      {
        "x-request-id": requestId,
        "cache-control": "no-store",
        "set-cookie": clearedSessionCookies(isSecure(req, config.trustProxy)),
        ...PAGE_HEADERS,
      },
    );
  };

  const ROUTES: Record<string, { method: string; run: typeof handleSignIn }> = {
    "/console/api/sign-in": { method: "POST", run: handleSignIn },
    "/console/api/session": { method: "GET", run: handleSession },
    "/console/api/sign-out": { method: "POST", run: handleSignOut },
  };

  /** Answers a console session request; false when the path is not one. */
  return (req: NodeRequest, res: NodeResponse): boolean => {
    const path = (req.url ?? "/").split("?")[0] as string;
    if (!path.startsWith("/console/api/")) return false;
    const requestId = newId("req");
    const route = Object.hasOwn(ROUTES, path) ? ROUTES[path] : undefined;
    const run = async () => {
      if (!route) throw errors.routeNotFound(path);
      if (req.method !== route.method) throw errors.methodNotAllowed(req.method ?? "");
      await route.run(req, res, requestId);
    };
    run().catch((thrown: unknown) => {
      const err =
        thrown instanceof BodyTooLargeError
          ? errors.bodyTooLarge(SIGN_IN_MAX_BYTES)
          : toServiceError(thrown, deps.log, requestId);
      if (res.headersSent) {
        res.destroy();
        return;
      }
      const extra: Record<string, string | string[]> = {};
      if (route && err.entry.status === 405) extra.allow = route.method;
      // A session that has ended is removed from the browser too.
      if (err.detail === errors.consoleSessionEnded().detail)
        extra["set-cookie"] = clearedSessionCookies(isSecure(req, config.trustProxy));
      if (err.entry.status === 413 && !("stream" in res)) extra.connection = "close";
      fail(res, requestId, err, extra);
    });
    return true;
  };
}

/** Reads and checks a sign-in body: `{"rootKey": "<string>"}` and nothing else. */
async function readSignIn(req: NodeRequest): Promise<string> {
  if (!isJsonContentType(req.headers["content-type"]))
    throw errors.unsupportedMediaType(req.headers["content-type"]);
  if (Number(req.headers["content-length"] ?? 0) > SIGN_IN_MAX_BYTES)
    throw errors.bodyTooLarge(SIGN_IN_MAX_BYTES);
  const body = await readBody(req, SIGN_IN_MAX_BYTES);
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString("utf8"));
  } catch {
    throw errors.invalidInput(
      [{ location: "", message: "is not valid JSON" }],
      "The request body is not valid JSON.",
    );
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed))
    throw errors.badField("", "must be a JSON object with rootKey");
  for (const name of Object.keys(parsed))
    if (name !== "rootKey") throw errors.badField(`/${name}`, "is not a known field");
  const rootKey = (parsed as { rootKey?: unknown }).rootKey;
  if (typeof rootKey !== "string" || rootKey.length === 0)
    throw errors.badField("/rootKey", "is required: the root key to sign in with");
  if (rootKey.length > ROOT_KEY_MAX_LENGTH)
    throw errors.badField("/rootKey", `must be at most ${ROOT_KEY_MAX_LENGTH} characters`);
  return rootKey;
}

/** Whether the request came over TLS, or through a trusted proxy that says it did. */
function isSecure(req: NodeRequest, trustProxy: boolean): boolean {
  if ((req.socket as { encrypted?: boolean }).encrypted === true) return true;
  if (!trustProxy) return false;
  const proto = req.headers["x-forwarded-proto"];
  const first = (Array.isArray(proto) ? proto[0] : proto)?.split(",")[0]?.trim().toLowerCase();
  return first === "https";
}

/**
 * The address sign-in attempts are counted by: the socket's peer, or behind a trusted proxy
 * the last address of X-Forwarded-For (the one that proxy appended; earlier ones are the
 * client's to write).
 */
function clientAddress(req: NodeRequest, trustProxy: boolean): string {
  if (trustProxy) {
    const forwarded = req.headers["x-forwarded-for"];
    const list = Array.isArray(forwarded) ? forwarded.join(",") : forwarded;
    const last = list?.split(",").at(-1)?.trim();
    if (last) return last;
  }
  return req.socket.remoteAddress ?? "unknown";
}

function send(
  res: NodeResponse,
  status: number,
  body: unknown,
  headers: Record<string, string | string[]>,
): void {
  const text = JSON.stringify(body);
  (res as ServerResponse).writeHead(status, {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
}
