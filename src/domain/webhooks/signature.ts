import { createHmac, randomBytes } from "node:crypto";

/**
 * Standard Webhooks signing: the signed content is `<webhook-id>.<webhook-timestamp>.<body>`,
 * each signature `v1,<base64 HMAC-SHA256 under the secret's bytes>`, several separated by
 * spaces (one per valid secret while a rotation's grace lasts). A secret is `whsec_` and the
 * base64 of its bytes.
 */

/** The prefix of every signing secret. */
export const SECRET_PREFIX = "whsec_";
/** Random bytes of a new secret: 32, the width of the HMAC-SHA256 key it becomes. */
const SECRET_BYTES = 32;

/** A new random signing secret, `whsec_<base64 of 32 bytes>`. */
export function newSigningSecret(): string {
  return `${SECRET_PREFIX}${randomBytes(SECRET_BYTES).toString("base64")}`;
}

/** The key bytes of a secret: the base64 after its prefix. */
function secretBytes(secret: string): Buffer {
  if (!secret.startsWith(SECRET_PREFIX)) throw new TypeError("not a whsec_ secret");
  return Buffer.from(secret.slice(SECRET_PREFIX.length), "base64");
}

/** The headers of one delivery attempt. */
export interface SignedHeaders {
  "webhook-id": string;
  "webhook-timestamp": string;
  "webhook-signature": string;
}

/**
 * Signs a delivery's body under every secret given (current first) at `atMs`: the three
 * Standard Webhooks headers. The timestamp is in whole seconds, as the specification has it.
 */
export function signDelivery(
  id: string,
  atMs: number,
  body: string,
  secrets: readonly string[],
): SignedHeaders {
  const timestamp = String(Math.floor(atMs / 1000));
  const content = `${id}.${timestamp}.${body}`;
  const signatures = secrets.map(
    (s) => `v1,${createHmac("sha256", secretBytes(s)).update(content).digest("base64")}`,
  );
  return {
    "webhook-id": id,
    "webhook-timestamp": timestamp,
    "webhook-signature": signatures.join(" "),
  };
}
