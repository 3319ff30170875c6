import { create } from "@bufbuild/protobuf";
import type { HandlerContext, Interceptor, ServiceImplSpec } from "@connectrpc/connect";
import {
  KeysService,
  type VerifyKeyRequest,
  VerifyKeyRequestSchema,
} from "../../../gen/latchkey/v2/keys_pb.js";
import { parseBearer } from "../../domain/authorization-header.js";
import type { Clock } from "../../domain/clock.js";
import { type GatewayPolicy, readPolicy } from "../../domain/gateway-policy.js";
import { newId } from "../../domain/ids.js";
import { rootPermissionsAllow } from "../../domain/root-permissions.js";
import { errors, type ServiceError } from "../../errors/service-error.js";
import type { Logger } from "../../log.js";
import { type Call, callOf, callValues } from "../../services/call.js";
import { errorType, toServiceError } from "../interceptors/request-context.js";
import { bindUnary, type UnarySpec } from "../invoke.js";
import { LiteHeaders } from "../lite-headers.js";
import { codeOf, errorAnswer, type GatewayAnswer, outcomeAnswer } from "./answer.js";

/** What a gateway door read from the request it was asked about. */
export interface GatewayRequest {
  door: "forward-auth" | "ext-authz";
  /** The root key as an Authorization value (`Bearer <key>`); undefined when none was sent. */
  authorization: string | undefined;
  /** How the gateway sends its root key, for the 401 when it sent none. */
  rootKeyHow: string;
  /** A header of the request (or of the gateway's policy), by lowercase name. */
  header(name: string): string | undefined;
  /** The client's address, as far as it is known and trusted (forwarded.ts, or Envoy's). */
  clientIp: string | undefined;
  /** The method and path of the original request (the path without its query). */
  method: string;
  path: string;
}

/** What the gateway doors share. */
export interface GatewayOptions {
  services: readonly ServiceImplSpec[];
  interceptors: Interceptor[];
  /** A header to read the end user's key from before the usual ones (lowercase), if any. */
  keyHeader: string | undefined;
  docsUrl: string | undefined;
  log: Logger;
  clock: Clock;
}

/** The longest key a verification accepts; a longer one cannot exist. */
const MAX_KEY_LENGTH = 512;
/** The longest tag of a verification. */
const MAX_TAG_LENGTH = 512;

/** The end user's key: the configured header, else `Authorization: Bearer`, else X-API-Key. */
function endUserKey(r: GatewayRequest, keyHeader: string | undefined): string | undefined {
  const own = keyHeader === undefined ? undefined : r.header(keyHeader)?.trim();
  if (own) return own;
  const bearer = parseBearer(r.header("authorization"));
  if (bearer.kind === "token") return bearer.token;
  const apiKey = r.header("x-api-key")?.trim();
  return apiKey ? apiKey : undefined;
}

/**
 * Tags of the verification event naming the original request (`method=GET`, `path=/orders`;
 * no query string, which may hold secrets), so that analytics can tell a key's uses apart.
 * A method or path that could not be a tag is left out.
 */
function requestTags(r: GatewayRequest): string[] {
  const tags: string[] = [];
  if (/^[A-Za-z]{1,20}$/.test(r.method)) tags.push(`method=${r.method.toUpperCase()}`);
  const path = r.path.split("?", 1)[0] as string;
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are refused
  if (path !== "" && !/[\u0000-\u001f\u007f]/.test(path)) {
    tags.push(`path=${path}`.slice(0, MAX_TAG_LENGTH));
  }
  return tags;
}

/** The verification a gateway's request asks for. */
function verificationOf(policy: GatewayPolicy, key: string, r: GatewayRequest): VerifyKeyRequest {
  return create(VerifyKeyRequestSchema, {
    key,
    // Absent when the header is missing or malformed: that is reported as the header's own.
    ...(policy.apiId !== "" ? { apiId: policy.apiId } : {}),
    tags: requestTags(r),
    ...(policy.permissions !== undefined ? { permissions: policy.permissions } : {}),
    ...(policy.cost !== undefined ? { credits: { cost: BigInt(policy.cost) } } : {}),
    ratelimits: policy.ratelimits.map((l) => ({
      name: l.name,
      ...(l.cost !== undefined ? { cost: BigInt(l.cost) } : {}),
      ...(l.limit !== undefined ? { limit: BigInt(l.limit) } : {}),
      ...(l.durationMs !== undefined ? { duration: BigInt(l.durationMs) } : {}),
    })),
    ...(r.clientIp !== undefined ? { clientIp: r.clientIp } : {}),
  });
}

/** A stand-in key for requests that carry none (or one no key could be): never verified. */
const NO_KEY = "-";

/**
 * Creates the authorization both gateway doors share. A gateway's request becomes a
 * keys.verifyKey request and goes through the same interceptors as every door (request id,
 * metrics and logs, the root key's authentication, validation) to the same verifyKey, the
 * request's one verification. Before it, as a root key's permissions are checked by every
 * procedure, the gateway's root key must hold api.<apiId>.verify_key for the policy's API
 * (403 otherwise: a gateway's configuration is wrong, no key is judged). So the order is that
 * of every procedure: the root key (401), the policy headers (400, each named), the grant
 * (403), then the end user's key (401 when there is none) and its verification.
 */
export function createGateway(opts: GatewayOptions): (r: GatewayRequest) => Promise<GatewayAnswer> {
  const keys = opts.services.find((s) => s.service.typeName === KeysService.typeName);
  const verify = keys?.methods.verifyKey as UnarySpec | undefined;
  if (!verify) throw new TypeError("the gateway needs keys.verifyKey among the served services");
  /** The requests whose end user sent no key (true) or one that cannot exist (false). */
  const keyless = new WeakMap<VerifyKeyRequest, boolean>();
  /** The 401 of a request sent without a root key, for the guard to throw. */
  const gatewayUnauthenticated = new WeakMap<VerifyKeyRequest, ServiceError>();
  const guarded = (req: VerifyKeyRequest, ctx: HandlerContext) => {
    const principal = callOf(ctx.values).principal;
    if (!principal) throw gatewayUnauthenticated.get(req) ?? errors.authenticationMissing();
    const required = `api.${req.apiId}.verify_key`;
    if (!rootPermissionsAllow(principal.permissions, required)) {
      throw errors.insufficientPermissions(required);
    }
    if (keyless.has(req)) return { data: { valid: false } };
    return verify.impl(req, ctx);
  };
  const invoke = bindUnary(
    { ...verify, impl: guarded } as UnarySpec,
    opts.interceptors,
    "init shape",
  );

  return async (r) => {
    const call: Call = { requestId: newId("req"), door: r.door };
    const { policy, violations } = readPolicy(r.header);
    const key = endUserKey(r, opts.keyHeader);
    const usable = key !== undefined && key.length <= MAX_KEY_LENGTH;
    const message = verificationOf(policy, usable ? key : NO_KEY, r);
    if (!usable) keyless.set(message, key === undefined);
    const header = new LiteHeaders();
    if (r.authorization !== undefined) {
      header.set("authorization", r.authorization);
      // Reported after the root key is authenticated, as a body's problems are (401 first).
      call.decodeViolations = violations;
    } else {
      gatewayUnauthenticated.set(message, errors.gatewayRootKeyMissing(r.rootKeyHow));
    }
    try {
      const result = await invoke(
        {
          protocolName: r.door,
          requestMethod: "POST",
          url: `/${KeysService.typeName}/VerifyKey`,
          header,
          values: callValues(call),
        },
        message,
      );
      const data = (result.message as { data?: Parameters<typeof outcomeAnswer>[0] }).data;
      const code = keyless.has(message)
        ? keyless.get(message)
          ? "KEY_MISSING"
          : "NOT_FOUND"
        : codeOf(data);
      return outcomeAnswer(data, code, call.requestId, opts.clock.now());
    } catch (thrown) {
      const err = toServiceError(thrown, opts.log, call.requestId);
      return errorAnswer(err, call.requestId, errorType(opts.docsUrl, err));
    }
  };
}
