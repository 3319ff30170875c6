import { type CidrSet, cidrsContain, parseIp } from "./networks.js";

/** The most `X-Forwarded-For` entries walked: a longer chain names no client we trust. */
export const MAX_FORWARDED_HOPS = 30;

/**
 * An `X-Forwarded-For` entry as an address: the address itself, or one written with a port
 * (`203.0.113.7:51234`, `[2001:db8::1]:443`), as some proxies write it. Undefined when it is
 * not an address at all.
 */
function entryAddress(entry: string): string | undefined {
  let text = entry.trim();
  if (text.startsWith("[")) {
    const end = text.indexOf("]");
    if (end < 0) return undefined;
    text = text.slice(1, end);
  } else if (text.indexOf(":") > 0 && text.indexOf(":") === text.lastIndexOf(":")) {
    // One colon: an IPv4 address with a port (an IPv6 address has at least two).
    text = text.slice(0, text.indexOf(":"));
  }
  return parseIp(text) ? text : undefined;
}

/**
 * Whether the connection's peer is one of the trusted proxies, whose forwarded headers
 * (`X-Forwarded-For`, `X-Forwarded-Proto`) may be believed. A peer that is not an address is
 * not trusted.
 */
export function isTrustedPeer(peer: string | undefined, trusted: CidrSet): boolean {
  const peerIp = peer === undefined ? undefined : parseIp(peer);
  return peerIp !== undefined && cidrsContain(trusted, peerIp);
}

/**
 * The address of the client a request was made for, as far as trusted proxies vouch for it.
 * The connection's peer is the client unless it is a trusted proxy; then `X-Forwarded-For`
 * (each proxy appends the address it received the request from) is walked from the right,
 * over trusted proxies only: the first entry that is not one is the client. An entry that is
 * not an address, a chain longer than MAX_FORWARDED_HOPS, or a peer that is not an address
 * gives no client (undefined): a key with network ranges then refuses the request. When
 * every entry is a trusted proxy, the leftmost is the client.
 *
 * Nothing left of the first untrusted entry is read: a client can write any `X-Forwarded-For`
 * it likes, and only what trusted proxies appended is believed.
 */
export function clientAddress(
  peer: string | undefined,
  forwardedFor: string | undefined,
  trusted: CidrSet,
): string | undefined {
  if (peer === undefined || parseIp(peer) === undefined) return undefined;
  if (!isTrustedPeer(peer, trusted) || forwardedFor === undefined) return peer;
  const entries = forwardedFor.split(",").filter((e) => e.trim() !== "");
  if (entries.length > MAX_FORWARDED_HOPS) return undefined;
  let client = peer;
  for (let i = entries.length - 1; i >= 0; i--) {
    const address = entryAddress(entries[i] as string);
    if (address === undefined) return undefined;
    client = address;
    if (!cidrsContain(trusted, parseIp(address) as NonNullable<ReturnType<typeof parseIp>>)) {
      return address;
    }
  }
  return client;
}
