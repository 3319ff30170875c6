import { BlockList, isIP } from "node:net";

/**
 * The addresses a webhook may not reach unless the deployment allows private ones: loopback,
 * private (RFC 1918, unique local), link-local (cloud metadata services live there), carrier
 * NAT, "this network", multicast, reserved and documentation ranges, and IPv4 written inside
 * IPv6 (mapped, NAT64 and 6to4 forms of the ranges above are checked by their IPv4 address).
 */
const blocked = new BlockList();
for (const [net, bits] of [
  ["0.0.0.0", 8],
  ["10.0.0.0", 8],
  ["100.64.0.0", 10],
  ["127.0.0.0", 8],
  ["169.254.0.0", 16],
  ["172.16.0.0", 12],
  ["192.0.0.0", 24],
  ["192.0.2.0", 24],
  ["192.88.99.0", 24],
  ["192.168.0.0", 16],
  ["198.18.0.0", 15],
  ["198.51.100.0", 24],
  ["203.0.113.0", 24],
  ["224.0.0.0", 4],
  ["240.0.0.0", 4],
] as const) {
  blocked.addSubnet(net, bits, "ipv4");
}
for (const [net, bits] of [
  ["::", 128],
  ["::1", 128],
  ["64:ff9b:1::", 48],
  ["100::", 64],
  ["2001:db8::", 32],
  ["fc00::", 7],
  ["fe80::", 10],
  ["fec0::", 10],
  ["ff00::", 8],
] as const) {
  blocked.addSubnet(net, bits, "ipv6");
}

/** The IPv4 address an IPv6 address carries (mapped, compatible, NAT64, 6to4), if any. */
function embeddedIpv4(address: string): string | undefined {
  const lower = address.toLowerCase();
  const dotted = /^(?:::ffff:|::|64:ff9b::)(\d+\.\d+\.\d+\.\d+)$/.exec(lower);
  if (dotted) return dotted[1];
  const hex = /^(?:::ffff:|64:ff9b::|2002:)([0-9a-f]{1,4}):([0-9a-f]{1,4})(?:::.*)?$/.exec(lower);
  if (!hex) return undefined;
  const hi = Number.parseInt(hex[1] as string, 16);
  const lo = Number.parseInt(hex[2] as string, 16);
  return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
}

/** Whether an IP address (v4 or v6 text) is one a webhook may not reach by default. */
export function isPrivateAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return blocked.check(address, "ipv4");
  if (family !== 6) return true;
  const v4 = embeddedIpv4(address);
  if (v4 !== undefined && blocked.check(v4, "ipv4")) return true;
  return blocked.check(address, "ipv6");
}

/**
 * What is wrong with an endpoint URL, in words, or undefined when it is acceptable: an
 * absolute http(s) URL with a host, no user name or password, and, unless `allowPrivate`,
 * no host that is literally a private address or `localhost` (names are checked again after
 * each DNS resolution, when a delivery is made).
 */
export function endpointUrlProblem(url: string, allowPrivate: boolean): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return "must be an absolute URL";
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:")
    return "must be an http or https URL";
  if (parsed.username !== "" || parsed.password !== "")
    return "must not carry a user name or password";
  if (parsed.hostname === "") return "must name a host";
  if (allowPrivate) return undefined;
  const host = parsed.hostname.replace(/^\[|\]$/g, "");
  if (host === "localhost" || host.endsWith(".localhost") || (isIP(host) && isPrivateAddress(host)))
    return "must not point at a private, loopback or link-local address";
  return undefined;
}
