import type { Interceptor } from "@connectrpc/connect";
import { errors, type Violation } from "../../errors/service-error.js";
import { callOf } from "../../services/call.js";
import { recordBodyKeys } from "../presence.js";
import { validateMessage } from "../validation.js";

/**
 * The one validator of every door: reports what the /v2 door found while decoding,
 * then checks the bounds declared in the proto (with the keys a Connect or gRPC JSON body
 * carried, for its required lists). Any violation is a 400 listing them all.
 *
 * Not an async function: it awaits nothing, and an async function that returns the next
 * interceptor's promise costs every call extra turns of the microtask queue. A refusal is a
 * rejected promise, as it would be from an async function.
 */
export function validateInterceptor(): Interceptor {
  return (next) => (req) => {
    if (req.stream) return next(req);
    try {
      const call = callOf(req.contextValues);
      const pending = call.decodeViolations;
      if (pending && pending.length > 0) throw errors.invalidInput(pending);
      if (call.bodyKeys) recordBodyKeys(req.message, call.bodyKeys);
      const out: Violation[] = [];
      validateMessage(req.method.input, req.message as unknown as Record<string, unknown>, "", out);
      if (out.length > 0) throw errors.invalidInput(out);
    } catch (err) {
      return Promise.reject(err);
    }
    return next(req);
  };
}
