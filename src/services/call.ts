import {
  type ContextValues,
  createContextKey,
  createContextValues,
  type HandlerContext,
} from "@connectrpc/connect";
import { errors, type Violation } from "../errors/service-error.js";

/**
 * The door a call came through; metrics and logs are labelled with it. `forward-auth` (the
 * HTTP authorization endpoint of gateways) and `ext-authz` (Envoy's gRPC authorization
 * service) call keys.verifyKey on a gateway's behalf.
 */
export type Door = "json" | "connect" | "grpc" | "grpc-web" | "forward-auth" | "ext-authz";

/** The authenticated caller: a root key and the workspace it acts for. */
export interface Principal {
  rootKeyId: string;
  workspaceId: string;
  permissions: readonly string[];
}

/** Per-call state shared by the doors, the interceptors and the procedures. */
export interface Call {
  requestId: string;
  door: Door;
  principal?: Principal;
  /** Problems the /v2 door found while decoding the body; reported after authentication. */
  decodeViolations?: Violation[];
  /**
   * The top-level keys (with a value other than null) of a Connect, gRPC or gRPC-web JSON
   * body, read for requests with a required list, which the decoded message cannot show.
   */
  bodyKeys?: ReadonlySet<string>;
}

const callKey = createContextKey<Call | undefined>(undefined, { description: "latchkey call" });

/** New context values holding a call; every door makes one per request. */
export function callValues(call: Call): ContextValues {
  return createContextValues().set(callKey, call);
}

/**
 * The call of a request; every door sets one before the interceptors run. Without one the
 * server itself is broken: 500 (a catalog error; the reason is only logged).
 */
export function callOf(values: ContextValues): Call {
  const call = values.get(callKey);
  if (!call) throw errors.unexpected(new TypeError("no call in context: the door did not set one"));
  return call;
}

/**
 * The principal of an authenticated call. Procedures that require auth can rely on it: the
 * authentication step refused the call otherwise, so its absence here is a 500.
 */
export function principalOf(ctx: HandlerContext): Principal {
  const p = callOf(ctx.values).principal;
  if (!p) {
    throw errors.unexpected(
      new TypeError("procedure needs a principal but the call is unauthenticated"),
    );
  }
  return p;
}
