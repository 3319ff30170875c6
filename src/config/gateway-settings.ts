import { type CidrSet, compileCidrs, MAX_CIDRS, parseCidr } from "../domain/networks.js";
import { ConfigError, documented, optional, type Setting } from "./parsers.js";

/**
 * TRUSTED_PROXIES: the proxies whose `X-Forwarded-For` the gateway authorization endpoint
 * believes (see domain/forwarded.ts), as comma-separated addresses or CIDR ranges, parsed once
 * at start. Unset: none, and the client is the connection's peer.
 */
const trustedProxies: Setting<CidrSet> = {
  env: "TRUSTED_PROXIES",
  help: "proxies whose X-Forwarded-For the gateway endpoint believes (comma-separated CIDRs)",
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

/** The settings of the gateway doors, for the table of settings.ts. */
export const GATEWAY_SETTINGS = {
  trustedProxies: documented(
    trustedProxies,
    "the proxies (comma-separated addresses or CIDR ranges, at most 100) whose `X-Forwarded-For` the gateway authorization endpoint `/v2/gateway/authorize` believes: the client is the first address, walking `X-Forwarded-For` from the right, that is not one of them; unset, `X-Forwarded-For` is ignored and the client is the connection's peer (see [gateways](gateways.md#the-client-address))",
  ),
  gatewayKeyHeader: documented(
    optional("GATEWAY_KEY_HEADER", "another header the gateway endpoint reads end-user keys from", {
      check: headerNameCheck,
      accepts: "an HTTP header name",
    }),
    "a header the gateway authorization endpoints read the end user's key from, before `Authorization: Bearer` and `X-API-Key` (see [gateways](gateways.md))",
  ),
};
