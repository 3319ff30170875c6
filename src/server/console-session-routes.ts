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
import type { CidrSet } from "../domain/networks.js";
import { AttemptWindow } from "../domain/sign-in-bounds.js";
import { errors } from "../errors/service-error.js";
import type { Principal } from "../services/call.js";
import { resolveSession, signIn, signOut } from "../services/console-sessions.js";
import type { Deps } from "../services/deps.js";
import { errorEnvelope } from "./error-envelope.js";
import { requestClientAddress, requestIsSecure } from "./forwarded-request.js";
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

/** What the handlers share: the server's parts, the sign-in bounds and the idle time. */
interface Routes {
  deps: Deps;
  attempts: AttemptWindow;
  idleS: number;
}
type Handler = (r: Routes, req: NodeRequest, res: NodeResponse, requestId: string) => Promise<void>;
type Headers = Record<string, string | string[]>;

/** Writes a JSON answer with the headers every session answer carries (never cached). */
function answer(
  res: NodeResponse,
  requestId: string,
  status: number,
  body: unknown,
  extra: Headers = {},
) {
  send(res, status, body, {
    "x-request-id": requestId,
    "cache-control": "no-store",
    ...PAGE_HEADERS,
    ...extra,
  });
}

/** Checks the key once, makes the session, answers its cookie and view; counted by outcome. */
const handleSignIn: Handler = async ({ deps, attempts, idleS }, req, res, requestId) => {
  const { config, metrics } = deps;
  const now = deps.clock.now();
  if (!attempts.admit(attemptAddress(req, config.trustedProxies), now)) {
    metrics.consoleSignIns.inc({ outcome: "limited" });
    const retry = String(Math.ceil(attempts.retryAfterMs(now) / 1000));
    throw Object.assign(errors.signInRateLimited(), { retryAfter: retry });
  }
  let session: Awaited<ReturnType<typeof signIn>>;
  try {
    session = await signIn(deps, await readSignIn(req));
  } catch (err) {
    metrics.consoleSignIns.inc({ outcome: "refused" });
    throw err;
  }
  metrics.consoleSignIns.inc({ outcome: "ok" });
  const maxAgeS = cookieMaxAgeS(session.expiresAt, deps.clock.now());
  const view = sessionView(session.principal, session.secret, session.expiresAt, idleS);
  answer(
    res,
    requestId,
    200,
    { meta: { requestId }, data: view },
    {
      "set-cookie": sessionCookie(
        session.secret,
        maxAgeS,
        requestIsSecure(req, config.trustedProxies),
      ),
    },
  );
};

/** Answers the session the cookie names, as it is now. */
const handleSession: Handler = async ({ deps, idleS }, req, res, requestId) => {
  const secret = sessionSecretOf(req.headers.cookie);
  if (secret === undefined) throw errors.consoleSessionEnded();
  const { principal, expiresAt } = await resolveSession(deps, secret);
  const view = sessionView(principal, secret, expiresAt, idleS);
  answer(res, requestId, 200, { meta: { requestId }, data: view });
};

/** Deletes the session (its CSRF token required) and clears the cookie. */
const handleSignOut: Handler = async ({ deps }, req, res, requestId) => {
  const secret = sessionSecretOf(req.headers.cookie);
  if (secret !== undefined) {
    const sent = req.headers[CSRF_HEADER];
    if (!csrfTokenMatches(secret, typeof sent === "string" ? sent : undefined))
      throw errors.consoleCsrfMissing();
    await signOut(deps, secret);
  }
  answer(
    res,
    requestId,
    200,
    { meta: { requestId }, data: {} },
    {
      "set-cookie": clearedSessionCookies(requestIsSecure(req, deps.config.trustedProxies)),
    },
  );
};

const ROUTES: Readonly<Record<string, { method: string; run: Handler }>> = {
  "/console/api/sign-in": { method: "POST", run: handleSignIn },
  "/console/api/session": { method: "GET", run: handleSession },
  "/console/api/sign-out": { method: "POST", run: handleSignOut },
};

/**
 * The console's session endpoints, beside its files under /console:
 * `POST /console/api/sign-in` takes `{"rootKey": "..."}` once and answers a session cookie
 * (HttpOnly, SameSite=Strict, Secure over TLS) and the session's CSRF token;
 * `GET /console/api/session` answers the current session (the console asks on load);
 * `POST /console/api/sign-out` deletes the session. Errors use the /v2 envelope.
 * Returns false when the path is not one of them.
 */
export function createConsoleSessionRoutes(deps: Deps) {
  const perAddress = deps.config.consoleSignInsPerMinute;
  const routes: Routes = {
    deps,
    attempts: new AttemptWindow(perAddress, perAddress * 100),
    idleS: deps.config.consoleSessionIdleS,
  };
  return (req: NodeRequest, res: NodeResponse): boolean => {
    const path = (req.url ?? "/").split("?")[0] as string;
    if (!path.startsWith("/console/api/")) return false;
    const requestId = newId("req");
    const route = Object.hasOwn(ROUTES, path) ? ROUTES[path] : undefined;
    const run = async () => {
      if (!route) throw errors.routeNotFound(path);
      if (req.method !== route.method) throw errors.methodNotAllowed(req.method ?? "");
      await route.run(routes, req, res, requestId);
    };
    run().catch((thrown: unknown) => fail(deps, req, res, requestId, thrown, route?.method));
    return true;
  };
}

/** Answers a failure as the /v2 envelope, with the headers its status calls for. */
function fail(
  deps: Deps,
  req: NodeRequest,
  res: NodeResponse,
  requestId: string,
  thrown: unknown,
  method: string | undefined,
): void {
  const err =
    thrown instanceof BodyTooLargeError
      ? errors.bodyTooLarge(SIGN_IN_MAX_BYTES)
      : toServiceError(thrown, deps.log, requestId);
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const extra: Headers = {};
  if (method && err.entry.status === 405) extra.allow = method;
  const retryAfter = (thrown as { retryAfter?: string }).retryAfter;
  if (retryAfter) extra["retry-after"] = retryAfter;
  // A session that has ended is removed from the browser too.
  if (err.detail === errors.consoleSessionEnded().detail)
    extra["set-cookie"] = clearedSessionCookies(requestIsSecure(req, deps.config.trustedProxies));
  if (err.entry.status === 413 && !("stream" in res)) extra.connection = "close";
  const envelope = errorEnvelope(err, requestId, errorType(deps.config.docsUrl, err));
  answer(res, requestId, err.entry.status, envelope, extra);
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

/**
 * The address sign-in attempts are counted by: the client's, as the trusted proxies vouch for
 * it (the same walk of X-Forwarded-For as the gateway's), else the connection's peer.
 */
function attemptAddress(req: NodeRequest, trustedProxies: CidrSet): string {
  return requestClientAddress(req, trustedProxies) ?? req.socket.remoteAddress ?? "unknown";
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
