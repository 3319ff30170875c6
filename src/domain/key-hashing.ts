import { createHmac, createSecretKey, hash, type KeyObject } from "node:crypto";
import { hashKey } from "./key-material.js";

/** Shortest pepper accepted, in characters: a random 32-character string is ~190 bits. */
export const MIN_PEPPER_LENGTH = 32;
/** Most peppers kept for verification besides the current one (each costs one HMAC per miss). */
export const MAX_PREVIOUS_PEPPERS = 4;

/** Stored hashes under a pepper read `hmac-sha256:<pepper id>:<base64 HMAC>`. */
const PEPPERED = "hmac-sha256:";

/** A pepper that can hash secrets; the pepper itself is never readable from it. */
class Pepper {
  /** A short public fingerprint, so stored hashes say which pepper made them. */
  readonly id: string;
  readonly #key: KeyObject;

  constructor(secret: string) {
    this.#key = createSecretKey(Buffer.from(secret, "utf8"));
    this.id = hash("sha256", `latchkey key-hash pepper id\0${secret}`, "base64url").slice(0, 8);
  }

  hash(secret: string): string {
    const mac = createHmac("sha256", this.#key).update(secret, "utf8").digest("base64");
    return `${PEPPERED}${this.id}:${mac}`;
  }
}

/**
 * How key secrets (keys and root keys) are stored and found again. Without a pepper a key
 * is stored as the plain SHA-256 of its secret, the form migrated hashes also have. With
 * one (KEY_HASH_PEPPER), new keys are stored as HMAC-SHA-256 under it; keys stored before,
 * migrated keys and keys under a previous pepper keep verifying, since a lookup tries every
 * stored form the secret may have. A pepper that is lost takes the keys hashed under it
 * along: nothing can verify them again.
 *
 * Holds the peppers in private fields only: logging or serialising it shows their ids.
 */
export class KeyHashing {
  readonly #current: Pepper | undefined;
  /** The current pepper (if any), then the previous ones, each once. */
  readonly #peppers: readonly Pepper[];

  constructor(current?: string, previous: readonly string[] = []) {
    const peppers = new Map<string, Pepper>();
    for (const secret of current === undefined ? previous : [current, ...previous]) {
      const pepper = new Pepper(secret);
      if (!peppers.has(pepper.id)) peppers.set(pepper.id, pepper);
    }
    this.#peppers = [...peppers.values()];
    this.#current = current === undefined ? undefined : this.#peppers[0];
  }

  /** The stored form of a new secret: under the current pepper, or plain SHA-256 without one. */
  stored(secret: string): string {
    return this.#current ? this.#current.hash(secret) : hashKey(secret);
  }

  /**
   * Every stored form this secret may have, in order of preference: the current pepper's,
   * the plain SHA-256 (`plain`, which the caller has computed already), the previous
   * peppers'. Without peppers, just `[plain]`.
   */
  candidates(secret: string, plain: string): string[] {
    if (this.#peppers.length === 0) return [plain];
    const out = this.#current ? [this.#current.hash(secret), plain] : [plain];
    for (const p of this.#peppers) if (p !== this.#current) out.push(p.hash(secret));
    return out;
  }

  /**
   * True when a stored hash is under a pepper other than the current one, so it should be
   * stored again under the current pepper while the secret is at hand. Plain SHA-256
   * hashes stay as they are: migrated hashes keep the form they were imported in.
   */
  isStale(storedHash: string): boolean {
    return (
      this.#current !== undefined &&
      storedHash.startsWith(PEPPERED) &&
      !storedHash.startsWith(`${PEPPERED}${this.#current.id}:`)
    );
  }

  /** What logs and serialisers see: the pepper ids, never the peppers. */
  toJSON(): { current: string | null; previous: string[] } {
    return {
      current: this.#current?.id ?? null,
      previous: this.#peppers.filter((p) => p !== this.#current).map((p) => p.id),
    };
  }
}
