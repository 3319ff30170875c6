import { clientAddress, isTrustedPeer } from "../domain/forwarded.js";
import type { CidrSet } from "../domain/networks.js";
import type { NodeRequest } from "./node-io.js";

// What a request's forwarded headers are believed to say, for every door that reads them
// (the gateway's forward-auth endpoint, the console's sessions): only what the proxies of
// TRUSTED_PROXIES vouch for, by the rules of domain/forwarded.ts.

/** A request header by lowercase name; a repeated one joined as one list. */
export function headerOf(req: NodeRequest, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v.join(", ") : v;
}

/**
 * The address of the client the request was made for: the connection's peer, or when the peer
 * is a trusted proxy, the first address walking `X-Forwarded-For` from the right that is not a
 * trusted proxy. Undefined when no address can be vouched for (see `clientAddress`).
 */
export function requestClientAddress(req: NodeRequest, trusted: CidrSet): string | undefined {
  return clientAddress(req.socket?.remoteAddress, headerOf(req, "x-forwarded-for"), trusted);
}

/**
 * Whether the client's request came over TLS: this connection is TLS, or its peer is a
 * trusted proxy whose `X-Forwarded-Proto` says `https` (its first entry: the scheme the
 * proxy in front received). From any other peer the header is ignored.
 */
export function requestIsSecure(req: NodeRequest, trusted: CidrSet): boolean {
  if ((req.socket as { encrypted?: boolean } | undefined)?.encrypted === true) return true;
  if (!isTrustedPeer(req.socket?.remoteAddress, trusted)) return false;
  const first = headerOf(req, "x-forwarded-proto")?.split(",")[0]?.trim().toLowerCase();
  return first === "https";
}
