import { hash, randomBytes } from "node:crypto";

/** The Bitcoin Base58 alphabet: no 0, O, I or l, so keys survive being read aloud or retyped. */
const BASE58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";

/** Encodes bytes as Base58 (big-endian, leading zero bytes become '1'). */
export function base58Encode(bytes: Uint8Array): string {
  let zeros = 0;
  while (zeros < bytes.length && bytes[zeros] === 0) zeros++;
  const digits: number[] = [];
  for (let i = zeros; i < bytes.length; i++) {
    let carry = bytes[i] as number;
    for (let j = 0; j < digits.length; j++) {
      carry += (digits[j] as number) << 8;
      digits[j] = carry % 58;
      carry = (carry / 58) | 0;
    }
    while (carry > 0) {
      digits.push(carry % 58);
      carry = (carry / 58) | 0;
    }
  }
  let out = "1".repeat(zeros);
  for (let i = digits.length - 1; i >= 0; i--) out += BASE58[digits[i] as number];
  return out;
}

/**
 * Generates a new secret key: `byteLength` bytes from the CSPRNG in Base58, behind
 * `<prefix>_` when a prefix is given.
 */
export function generateKey(prefix: string | undefined, byteLength: number): string {
  const body = base58Encode(randomBytes(byteLength));
  return prefix ? `${prefix}_${body}` : body;
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
