import type { Interceptor } from "@connectrpc/connect";
import { errors, type Violation } from "../../errors/service-error.js";
import { callOf } from "../../services/call.js";
import { recordBodyKeys } from "../presence.js";
import { validateMessage } from "../validation.js";

/**
 * The one validator of every door: reports what the /v2 door found while decoding,
 * then checks the bounds declared in the proto (with the keys a Connect or gRPC JSON body
 * carried, for its required lists). Any violation is a 400 listing them all.
 */
export function validateInterceptor(): Interceptor {
  return (next) => async (req) => {
    if (req.stream) return next(req);
    const call = callOf(req.contextValues);
    const pending = call.decodeViolations;
    if (pending && pending.length > 0) throw errors.invalidInput(pending);
    if (call.bodyKeys) recordBodyKeys(req.message, call.bodyKeys);
    const out: Violation[] = [];
    validateMessage(req.method.input, req.message as unknown as Record<string, unknown>, "", out);
    if (out.length > 0) throw errors.invalidInput(out);
    return next(req);
  };
}
