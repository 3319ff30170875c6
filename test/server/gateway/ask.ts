import type { TestServer } from "../../harness/server.js";

// How the gateway tests call the forward-auth endpoint, as a gateway would.

/** A gateway's configuration: the API whose keys it accepts and its root key. */
export interface Gateway {
  apiId: string;
  rootKey: string | undefined;
}

/** An API and a root key holding only api.<apiId>.verify_key for it. */
export async function gatewayOf(s: TestServer): Promise<Gateway> {
  const apiId = await s.seed.api();
  return { apiId, rootKey: await s.seed.rootKey([`api.${apiId}.verify_key`]) };
}

/** The endpoint's answer: status, headers, the body as text and as JSON when it is JSON. */
export interface Asked {
  status: number;
  headers: Headers;
  text: string;
  json: unknown;
}

/**
 * Asks the endpoint about a request with these headers (the end user's and the policy's),
 * the gateway's API and root key set as a gateway sets them (a policy header given
 * overrides the API id).
 */
export function askerOf(s: TestServer) {
  return async (
    g: Gateway,
    headers: Record<string, string>,
    opts: { method?: string; path?: string } = {},
  ): Promise<Asked> => {
    const sent: Record<string, string> = { "x-latchkey-api-id": g.apiId, ...headers };
    if (g.rootKey !== undefined) sent["x-latchkey-root-key"] = g.rootKey;
    const res = await fetch(`${s.url}/v2/gateway/authorize${opts.path ?? ""}`, {
      method: opts.method ?? "GET",
      headers: sent,
    });
    const text = await res.text();
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {}
    return { status: res.status, headers: res.headers, text, json };
  };
}
