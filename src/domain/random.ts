import { randomFillSync } from "node:crypto";

/** Alphabet of ids and request ids: ASCII letters and digits, so ids match `^[a-zA-Z0-9_]+$`. */
const ALPHANUMERIC = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

// Random bytes are drawn from a pool refilled by the CSPRNG, because one randomFillSync
// per id costs more than the id itself on the hot path.
const pool = Buffer.alloc(4096);
let poolOffset = pool.length;

function nextByte(): number {
  if (poolOffset >= pool.length) {
    randomFillSync(pool);
    poolOffset = 0;
  }
  return pool[poolOffset++] as number;
}

/**
 * Returns `length` characters drawn uniformly from `alphabet` with a CSPRNG.
 * Bytes that would bias the result (the tail above the largest multiple of the
 * alphabet size) are rejected.
 */
export function randomString(length: number, alphabet: string = ALPHANUMERIC): string {
  const size = alphabet.length;
  const limit = 256 - (256 % size);
  let out = "";
  while (out.length < length) {
    const byte = nextByte();
    if (byte < limit) out += alphabet[byte % size];
  }
  return out;
}
