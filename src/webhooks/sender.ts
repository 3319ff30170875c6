import { lookup as dnsLookup, type LookupAddress } from "node:dns";
import http from "node:http";
import https from "node:https";
import { isIP, type LookupFunction } from "node:net";
import { isPrivateAddress } from "../domain/webhooks/addresses.js";

/** Most bytes of a receiver's answer read (then discarded); the rest is not waited for. */
export const MAX_RESPONSE_BYTES = 65_536;

/** How a delivery attempt is made. */
export interface SendOptions {
  connectTimeoutMs: number;
  timeoutMs: number;
  allowPrivate: boolean;
}

/** What an attempt got: an answer's status, or an error in words (no answer). */
export type SendResult = { status: number } | { error: string };

/**
 * A DNS lookup that refuses the name when any address it resolves to is private (unless
 * allowed), and hands the connection the very address it checked: the request connects to
 * what was checked, so a name that resolves elsewhere a moment later (DNS rebinding) cannot
 * lead it to a private address.
 */
function checkedLookup(allowPrivate: boolean): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (err, addresses: LookupAddress[]) => {
      if (err) return callback(err, "", 0);
      const refused = !allowPrivate && addresses.some((a) => isPrivateAddress(a.address));
      if (refused || addresses.length === 0) {
        const e = Object.assign(new Error(`${hostname} resolves to a private address`), {
          code: "EWEBHOOKPRIVATE",
        });
        return callback(e, "", 0);
      }
      if (options.all) return callback(null, addresses as unknown as string, 0);
      const first = addresses[0] as LookupAddress;
      callback(null, first.address, first.family);
    });
  };
}

/** Keep-alive agents, so that a busy endpoint does not pay a connection per delivery. */
const agents = {
  http: new http.Agent({ keepAlive: true }),
  https: new https.Agent({ keepAlive: true }),
};

/**
 * POSTs a delivery's body to `url` with its headers and answers what came back. Never
 * follows a redirect (a 3xx is the receiver's answer, a failure); refuses private, loopback
 * and link-local addresses unless allowed, after DNS resolution; gives up connecting after
 * `connectTimeoutMs` and the whole attempt after `timeoutMs`; reads at most 64 KiB of the
 * answer and discards it. Never throws.
 */
export function sendDelivery(
  url: string,
  headers: Readonly<Record<string, string>>,
  body: string,
  o: SendOptions,
): Promise<SendResult> {
  let target: URL;
  try {
    target = new URL(url);
  } catch {
    return Promise.resolve({ error: "the URL is not valid" });
  }
  const host = target.hostname.replace(/^\[|\]$/g, "");
  if (!o.allowPrivate && isIP(host) !== 0 && isPrivateAddress(host))
    return Promise.resolve({ error: "refused: the address is private, loopback or link-local" });
  const secure = target.protocol === "https:";
  return new Promise((resolve) => {
    let settled = false;
    const finish = (r: SendResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(whole);
      clearTimeout(connecting);
      resolve(r);
    };
    const req = (secure ? https : http).request(target, {
      method: "POST",
      agent: secure ? agents.https : agents.http,
      lookup: checkedLookup(o.allowPrivate),
      headers: {
        ...headers,
        "content-type": "application/json",
        "content-length": String(Buffer.byteLength(body)),
        "user-agent": "Latchkey-Webhooks/1",
      },
    });
    const whole = setTimeout(() => {
      finish({ error: `timed out after ${o.timeoutMs} ms` });
      req.destroy();
    }, o.timeoutMs);
    const connecting = setTimeout(() => {
      finish({ error: `could not connect within ${o.connectTimeoutMs} ms` });
      req.destroy();
    }, o.connectTimeoutMs);
    req.on("socket", (socket) => {
      // A reused keep-alive socket is connected already.
      if (!socket.connecting) clearTimeout(connecting);
      else socket.once(secure ? "secureConnect" : "connect", () => clearTimeout(connecting));
    });
    req.on("error", (err: NodeJS.ErrnoException) => {
      finish({
        error:
          err.code === "EWEBHOOKPRIVATE"
            ? "refused: the address is private, loopback or link-local"
            : `request failed: ${err.code ?? err.message}`,
      });
    });
    req.on("response", (res) => {
      let read = 0;
      res.on("data", (chunk: Buffer) => {
        read += chunk.length;
        if (read > MAX_RESPONSE_BYTES) {
          finish({ status: res.statusCode ?? 0 });
          res.destroy();
        }
      });
      res.on("end", () => finish({ status: res.statusCode ?? 0 }));
      res.on("error", () => finish({ status: res.statusCode ?? 0 }));
    });
    req.end(body);
  });
}
