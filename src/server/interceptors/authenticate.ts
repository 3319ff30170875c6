import type { Interceptor } from "@connectrpc/connect";
import { parseBearer } from "../../domain/authorization-header.js";
import { errors } from "../../errors/service-error.js";
import { authenticateRootKey } from "../../services/auth.js";
import { callOf } from "../../services/call.js";
import type { Deps } from "../../services/deps.js";
import { procedureOf } from "../../services/procedures.js";

/**
 * Authenticates the root key of calls whose procedure needs one (the procedures table
 * says which) and puts the principal on the call. Runs before validation, so a caller
 * without a valid key learns nothing from the body checks (401 before 400).
 *
 * Not an async function: a call without a root key (a verification, say) goes straight on,
 * without the extra turns of the microtask queue an async function returning the next
 * interceptor's promise would cost it. A refusal is a rejected promise.
 */
export function authenticateInterceptor(deps: Deps): Interceptor {
  return (next) => (req) => {
    let token: string;
    try {
      const { procedure } = procedureOf(req.method);
      if (procedure.auth === "none") return next(req);
      const bearer = parseBearer(req.header.get("authorization"));
      if (bearer.kind === "missing") {
        if (procedure.auth === "optional" && !deps.config.verifyRequiresRootKey) return next(req);
        throw errors.authenticationMissing();
      }
      if (bearer.kind === "malformed") throw errors.authenticationMalformed();
      token = bearer.token;
    } catch (err) {
      return Promise.reject(err);
    }
    return authenticateRootKey(deps, token).then((principal) => {
      callOf(req.contextValues).principal = principal;
      return next(req);
    });
  };
}
