import type { Interceptor } from "@connectrpc/connect";
import { parseBearer } from "../../domain/authorization-header.js";
import { CSRF_HEADER, csrfTokenMatches, sessionSecretOf } from "../../domain/console-session.js";
import { errors } from "../../errors/service-error.js";
import { authenticateRootKey } from "../../services/auth.js";
import { type Call, callOf, type Principal } from "../../services/call.js";
import { resolveSession } from "../../services/console-sessions.js";
import type { Deps } from "../../services/deps.js";
import { procedureOf } from "../../services/procedures.js";

/**
 * Authenticates the root key of calls whose procedure needs one (the procedures table
 * says which) and puts the principal on the call. Runs before validation, so a caller
 * without a valid key learns nothing from the body checks (401 before 400).
 *
 * Without an Authorization header, a Connect call (the protocol the web console speaks) may
 * instead carry a console session's cookie, together with that session's CSRF token in the
 * X-Latchkey-Csrf header (401 without it, so a page of another site that makes the browser
 * send the cookie gets nothing done). The session resolves to its root key as it is now, on
 * every call. The /v2 door and gRPC never read the cookie: no browser-driven form reaches them.
 *
 * Not an async function: a call without a root key (a verification, say) goes straight on,
 * without the extra turns of the microtask queue an async function returning the next
 * interceptor's promise would cost it. A refusal is a rejected promise.
 */
export function authenticateInterceptor(deps: Deps): Interceptor {
  return (next) => (req) => {
    let found: Promise<Principal>;
    let call: Call;
    try {
      const { procedure } = procedureOf(req.method);
      if (procedure.auth === "none") return next(req);
      call = callOf(req.contextValues);
      const bearer = parseBearer(req.header.get("authorization"));
      if (bearer.kind === "missing") {
        const session =
          call.door === "connect" ? sessionSecretOf(req.header.get("cookie")) : undefined;
        if (session !== undefined) {
          if (!csrfTokenMatches(session, req.header.get(CSRF_HEADER)))
            throw errors.consoleCsrfMissing();
          found = resolveSession(deps, session).then((s) => s.principal);
        } else {
          if (procedure.auth === "optional" && !deps.config.verifyRequiresRootKey) return next(req);
          throw errors.authenticationMissing();
        }
      } else if (bearer.kind === "malformed") {
        throw errors.authenticationMalformed();
      } else {
        found = authenticateRootKey(deps, bearer.token);
      }
    } catch (err) {
      return Promise.reject(err);
    }
    return found.then((principal) => {
      call.principal = principal;
      return next(req);
    });
  };
}
