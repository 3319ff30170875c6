import { parseQuery, QuerySyntaxError } from "./permission-query.js";

/**
 * The policy a gateway sets on each authorization request, in headers of its own
 * configuration (an end user never chooses them: the gateway overwrites whatever the client
 * sent): which API's keys it accepts, the permissions query the key must satisfy, the credits
 * the request costs, and the rate limits it applies. Every header is bounded as the
 * verification's own fields are; an empty header counts as absent.
 */
export const POLICY_HEADERS = {
  apiId: "X-Latchkey-Api-Id",
  permissions: "X-Latchkey-Permissions",
  cost: "X-Latchkey-Cost",
  ratelimits: "X-Latchkey-Ratelimits",
} as const;

/** A rate limit the policy names, with its cost and, for an ad-hoc limit, its size. */
export interface PolicyLimit {
  name: string;
  cost?: number;
  limit?: number;
  durationMs?: number;
}

/** What the policy headers ask of a verification. */
export interface GatewayPolicy {
  apiId: string;
  permissions?: string;
  cost?: number;
  ratelimits: PolicyLimit[];
}

/** A header that breaks its bounds: the header's name and what is wrong. */
export interface PolicyViolation {
  location: string;
  message: string;
}

/** The most rate limits the ratelimits header may name (as many as a verification may). */
export const MAX_POLICY_LIMITS = 100;
/** The longest ratelimits header read. */
export const MAX_RATELIMITS_HEADER = 8192;
const MAX_PERMISSIONS = 1000;
const MAX_COST = 1_000_000_000_000;
const API_ID = /^[a-zA-Z0-9_]{1,255}$/;
/** A limit name in the header: 3 to 128 characters that are not the header's separators. */
const LIMIT_NAME = /^[a-zA-Z0-9_.:/*-]{3,128}$/;

/** The bounds of each parameter of a rate limit in the header. */
const LIMIT_PARAMETERS = {
  cost: { min: 0, max: MAX_COST },
  limit: { min: 1, max: Number.MAX_SAFE_INTEGER },
  duration: { min: 1000, max: 2_592_000_000 },
} as const;

type LimitParameter = keyof typeof LIMIT_PARAMETERS;

/** A whole number of at most 16 digits in [min, max], written without sign or leading zero. */
function wholeNumber(text: string, min: number, max: number): number | undefined {
  if (!/^(0|[1-9][0-9]{0,15})$/.test(text)) return undefined;
  const n = Number(text);
  return n >= min && n <= max ? n : undefined;
}

/** One item of the ratelimits header: `name` or `name;cost=2` or `name;limit=10;duration=1000`. */
function readLimit(item: string, index: number): PolicyLimit | string {
  const [head, ...params] = item.split(";").map((p) => p.trim());
  const name = head as string;
  const at = `item ${index} (${JSON.stringify(name.slice(0, 40))})`;
  if (!LIMIT_NAME.test(name)) {
    return `${at}: a limit name is 3 to 128 letters, digits or any of _ . : / * -`;
  }
  const out: PolicyLimit = { name };
  const seen = new Set<string>();
  for (const param of params) {
    const eq = param.indexOf("=");
    const key = (eq < 0 ? param : param.slice(0, eq)).trim();
    if (!(key in LIMIT_PARAMETERS)) {
      return `${at}: unknown parameter ${JSON.stringify(key.slice(0, 20))} (cost, limit, duration)`;
    }
    if (seen.has(key)) return `${at}: ${key} is given twice`;
    seen.add(key);
    const { min, max } = LIMIT_PARAMETERS[key as LimitParameter];
    const value = eq < 0 ? undefined : wholeNumber(param.slice(eq + 1).trim(), min, max);
    if (value === undefined) return `${at}: ${key} must be a whole number from ${min} to ${max}`;
    if (key === "cost") out.cost = value;
    else if (key === "limit") out.limit = value;
    else out.durationMs = value;
  }
  if ((out.limit === undefined) !== (out.durationMs === undefined)) {
    return `${at}: an ad-hoc limit needs both limit and duration`;
  }
  return out;
}

function readLimits(text: string | undefined): PolicyLimit[] | string {
  if (text === undefined || text.trim() === "") return [];
  if (text.length > MAX_RATELIMITS_HEADER) {
    return `must be at most ${MAX_RATELIMITS_HEADER} characters long (got ${text.length})`;
  }
  const items = text.split(",").map((i) => i.trim());
  if (items.length > MAX_POLICY_LIMITS) {
    return `must name at most ${MAX_POLICY_LIMITS} limits (got ${items.length})`;
  }
  const out: PolicyLimit[] = [];
  for (const [i, item] of items.entries()) {
    if (item === "") return `item ${i} is empty`;
    const limit = readLimit(item, i);
    if (typeof limit === "string") return limit;
    out.push(limit);
  }
  return out;
}

function readPermissions(text: string | undefined): string | undefined | { problem: string } {
  if (text === undefined || text.trim() === "") return undefined;
  if (text.length > MAX_PERMISSIONS) {
    return { problem: `must be at most ${MAX_PERMISSIONS} characters long (got ${text.length})` };
  }
  try {
    parseQuery(text);
  } catch (err) {
    if (!(err instanceof QuerySyntaxError)) throw err;
    return { problem: `is not a permissions query: ${err.message}` };
  }
  return text;
}

/**
 * Reads the policy headers through `get` (a header by its lowercase name, undefined when
 * absent). Every header is checked and every problem reported, each at the header's name.
 */
export function readPolicy(get: (name: string) => string | undefined): {
  policy: GatewayPolicy;
  violations: PolicyViolation[];
} {
  const violations: PolicyViolation[] = [];
  const bad = (location: string, message: string) => violations.push({ location, message });
  const policy: GatewayPolicy = { apiId: "", ratelimits: [] };

  const apiId = get(POLICY_HEADERS.apiId.toLowerCase())?.trim();
  if (apiId === undefined || apiId === "") {
    bad(POLICY_HEADERS.apiId, "is required: the id of the API whose keys the gateway accepts");
  } else if (!API_ID.test(apiId)) {
    bad(POLICY_HEADERS.apiId, "must be an API id: at most 255 letters, digits or _");
  } else policy.apiId = apiId;

  const permissions = readPermissions(get(POLICY_HEADERS.permissions.toLowerCase()));
  if (typeof permissions === "object") bad(POLICY_HEADERS.permissions, permissions.problem);
  else if (permissions !== undefined) policy.permissions = permissions;

  const costText = get(POLICY_HEADERS.cost.toLowerCase())?.trim();
  if (costText !== undefined && costText !== "") {
    const cost = wholeNumber(costText, 0, MAX_COST);
    if (cost === undefined)
      bad(POLICY_HEADERS.cost, `must be a whole number from 0 to ${MAX_COST}`);
    else policy.cost = cost;
  }

  const limits = readLimits(get(POLICY_HEADERS.ratelimits.toLowerCase()));
  if (typeof limits === "string") bad(POLICY_HEADERS.ratelimits, limits);
  else policy.ratelimits = limits;
  return { policy, violations };
}
