import { hash, randomBytes } from "node:crypto";
import { base58Encode, base58Fixed } from "./base58.js";
import { type KeyFormat, withChecksum } from "./key-format.js";

export { base58Encode } from "./base58.js";

/**
 * Generates a new secret key: `byteLength` bytes from the CSPRNG in Base58, behind
 * `<prefix>_` when a prefix is given. In the checksummed format (see key-format.ts) the
 * random part has a fixed width and ends with the CRC-32 of everything before it.
 */
export function generateKey(
  prefix: string | undefined,
  byteLength: number,
  format: KeyFormat = "plain",
): string {
  const lead = prefix ? `${prefix}_` : "";
  const random = randomBytes(byteLength);
  if (format === "plain") return lead + base58Encode(random);
  return withChecksum(lead + base58Fixed(random));
}

/** The stored form of a key: base64 (padded) of SHA-256 over the UTF-8 bytes of the full key. */
export function hashKey(key: string): string {
  return hash("sha256", key, "base64");
}

/** The displayable start of a key: the prefix and the first 4 characters of the random part. */
export function keyStart(key: string, prefix: string | undefined): string {
  if (!prefix) return key.slice(0, 4);
  return key.slice(0, prefix.length + 1 + 4);
}

/**
 * The stored form of an imported key hash: SHA-256 as base64 (44 characters, padded) or as
 * hex (64 characters, either case) becomes base64. Anything else is not a SHA-256: null.
 */
export function normalizeKeyHash(hash: string): string | null {
  if (/^[0-9a-fA-F]{64}$/.test(hash)) return Buffer.from(hash, "hex").toString("base64");
  if (/^[A-Za-z0-9+/]{43}=$/.test(hash)) {
    const bytes = Buffer.from(hash, "base64");
    if (bytes.length === 32 && bytes.toString("base64") === hash) return hash;
  }
  return null;
}
