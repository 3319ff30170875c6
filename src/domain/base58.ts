/** The Bitcoin Base58 alphabet: no 0, O, I or l, so keys survive being read aloud or retyped. */
export const BASE58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";

/** A regular-expression character class of the alphabet, for patterns built from it. */
export const BASE58_CLASS = "[1-9A-HJ-NP-Za-km-z]";

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
 * The number of Base58 digits that can hold any `byteLength` bytes: the smallest w with
 * 58^w >= 256^byteLength (22 for 16 bytes, 6 for the 4 bytes of a CRC-32).
 */
export function base58Width(byteLength: number): number {
  const limit = 256n ** BigInt(byteLength);
  let width = 0;
  for (let power = 1n; power < limit; power *= 58n) width++;
  return width;
}

/**
 * Bytes as a Base58 numeral of exactly `base58Width(bytes.length)` digits, padded on the
 * left with '1' (the zero digit): the same number as `base58Encode`, at a fixed length.
 */
export function base58Fixed(bytes: Uint8Array): string {
  return base58Encode(bytes).padStart(base58Width(bytes.length), BASE58[0]);
}
