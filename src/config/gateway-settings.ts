import { type CidrSet, compileCidrs, MAX_CIDRS, parseCidr } from "../domain/networks.js";
import { ConfigError, documented, optional, type Setting } from "./parsers.js";

/**
 * TRUSTED_PROXIES: the proxies in front of Latchkey whose forwarded headers are believed (see
 * domain/forwarded.ts and server/forwarded-request.ts): `X-Forwarded-For` by the gateway
 * authorization endpoint and the console's sign-in bound, `X-Forwarded-Proto` by the console's
 * session cookie. Comma-separated addresses or CIDR ranges, parsed once at start. Unset: none,
 * the headers are ignored and the client is the connection's peer.
 */
const trustedProxies: Setting<CidrSet> = {
  env: "TRUSTED_PROXIES",
  help: "proxies whose X-Forwarded-For and X-Forwarded-Proto are believed (comma-separated CIDRs)",
  shownDefault: "(none)",
  accepts: `up to ${MAX_CIDRS} IPv4 or IPv6 addresses or CIDR ranges, comma-separated`,
  parse(raw, label) {
    const texts = (raw ?? "")
      .split(",")
      .map((t) => t.trim())
      .filter((t) => t !== "");
    if (texts.length > MAX_CIDRS) {
      throw new ConfigError(`${label}: at most ${MAX_CIDRS} ranges (got ${texts.length})`);
    }
    for (const t of texts) {
      const { problem } = parseCidr(t);
      if (problem) throw new ConfigError(`${label}: '${t}' ${problem}`);
    }
    return compileCidrs(texts);
  },
};

/** An HTTP header name (an RFC 9110 token), lowercased as Node gives header names. */
function headerNameCheck(value: string, label: string): string {
  if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,64}$/.test(value)) {
    throw new ConfigError(
      `${label}=${value}: must be an HTTP header name of at most 64 characters`,
    );
  }
  return value.toLowerCase();
}

/** The settings of the gateway doors and of the proxies in front, for the table of settings.ts. */
export const GATEWAY_SETTINGS = {
  trustedProxies: documented(
    trustedProxies,
    "the proxies in front of Latchkey (comma-separated addresses or CIDR ranges, at most 100) whose forwarded headers are believed, and only on a connection from one of them: the client is the first address, walking `X-Forwarded-For` from the right, that is not one of them (for the gateway authorization endpoint `/v2/gateway/authorize` and for counting console sign-in attempts per address), and the console's session cookie is `Secure` when `X-Forwarded-Proto` says `https`; unset, both headers are ignored and the client is the connection's peer (see [gateways](gateways.md#the-client-address) and [console](console.md))",
  ),
  gatewayKeyHeader: documented(
    optional("GATEWAY_KEY_HEADER", "another header the gateway endpoint reads end-user keys from", {
      check: headerNameCheck,
      accepts: "an HTTP header name",
    }),
    "a header the gateway authorization endpoints read the end user's key from, before `Authorization: Bearer` and `X-API-Key` (see [gateways](gateways.md))",
  ),
};
