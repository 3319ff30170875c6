import { createCipheriv, createDecipheriv, hash, hkdfSync, randomBytes } from "node:crypto";

/**
 * How webhook signing secrets are stored. Unlike key secrets, which are only ever hashed, a
 * signing secret must be read back to sign each delivery. With WEBHOOK_SECRETS_KEY set it is
 * stored as `aes-256-gcm:<key id>:<base64 nonce, ciphertext and tag>`, under a key derived
 * (HKDF-SHA256) from the setting, which lives only in the servers' environment: a copy of the
 * database then cannot sign. Without it the secret is stored as `plain:<secret>`, protected
 * only by access to the database. Former keys (WEBHOOK_SECRETS_KEY_PREVIOUS) still open what
 * they sealed, so the key can be rotated; a secret is sealed again under the current key when
 * it is rotated.
 */

/** Shortest key accepted, in characters. */
export const MIN_SECRETS_KEY_LENGTH = 32;

const SEALED = "aes-256-gcm:";
const PLAIN = "plain:";
const NONCE_BYTES = 12;
const TAG_BYTES = 16;

class SealingKey {
  readonly id: string;
  readonly #key: Buffer;
  constructor(secret: string) {
    this.id = hash("sha256", `latchkey webhook secrets key id\0${secret}`, "base64url").slice(0, 8);
    this.#key = Buffer.from(hkdfSync("sha256", secret, "latchkey", "webhook signing secrets", 32));
  }
  seal(text: string): string {
    const nonce = randomBytes(NONCE_BYTES);
    const cipher = createCipheriv("aes-256-gcm", this.#key, nonce);
    cipher.setAAD(Buffer.from(this.id));
    const body = Buffer.concat([cipher.update(text, "utf8"), cipher.final(), cipher.getAuthTag()]);
    return `${SEALED}${this.id}:${Buffer.concat([nonce, body]).toString("base64")}`;
  }
  open(sealed: Buffer): string {
    const nonce = sealed.subarray(0, NONCE_BYTES);
    const tag = sealed.subarray(sealed.length - TAG_BYTES);
    const decipher = createDecipheriv("aes-256-gcm", this.#key, nonce);
    decipher.setAAD(Buffer.from(this.id));
    decipher.setAuthTag(tag);
    return Buffer.concat([
      decipher.update(sealed.subarray(NONCE_BYTES, sealed.length - TAG_BYTES)),
      decipher.final(),
    ]).toString("utf8");
  }
}

/** Seals secrets for storage and opens stored ones; holds no readable key material. */
export class SecretBox {
  readonly #current: SealingKey | undefined;
  readonly #byId = new Map<string, SealingKey>();

  constructor(current: string | undefined, previous: readonly string[] = []) {
    this.#current = current === undefined ? undefined : new SealingKey(current);
    for (const k of [this.#current, ...previous.map((p) => new SealingKey(p))]) {
      if (k) this.#byId.set(k.id, k);
    }
  }

  /** The ids of the keys it holds, current first (what the configuration shows of them). */
  get keyIds(): string[] {
    return [...this.#byId.keys()];
  }

  /** The stored form of a secret: sealed under the current key, or plain without one. */
  seal(secret: string): string {
    return this.#current ? this.#current.seal(secret) : `${PLAIN}${secret}`;
  }

  /** The secret of a stored form; throws a TypeError when no key it holds sealed it. */
  open(stored: string): string {
    if (stored.startsWith(PLAIN)) return stored.slice(PLAIN.length);
    if (!stored.startsWith(SEALED)) throw new TypeError("unknown stored secret form");
    const rest = stored.slice(SEALED.length);
    const colon = rest.indexOf(":");
    const key = this.#byId.get(rest.slice(0, colon));
    if (!key) throw new TypeError(`no WEBHOOK_SECRETS_KEY with id ${rest.slice(0, colon)}`);
    return key.open(Buffer.from(rest.slice(colon + 1), "base64"));
  }

  /** What a serialised configuration shows: the key ids, never the keys. */
  toJSON(): { keyIds: string[] } {
    return { keyIds: this.keyIds };
  }
}
