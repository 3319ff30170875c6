import { BASE58_CLASS, base58Fixed, base58Width } from "./base58.js";
import { crc32 } from "./crc32.js";

/**
 * How an API's new keys are written. `plain`: `<prefix>_<random>`, the random bytes in Base58
 * (the format every key had before checksums). `checksummed`: the random bytes as a Base58
 * numeral of fixed width, then a CRC-32 of everything before it (prefix and `_` included) as
 * 6 more Base58 digits, so a scanner can tell a real key from random text offline, and the
 * total length is fixed by the prefix and the byte length.
 */
export type KeyFormat = "plain" | "checksummed";

/** Base58 digits of the checksum: 58^6 > 2^32, so every CRC-32 fits. */
export const CHECKSUM_LENGTH = 6;
/** The fewest and most random bytes a key may have (createKey's byteLength bounds). */
export const MIN_KEY_BYTES = 16;
export const MAX_KEY_BYTES = 255;
/** The longest prefix a key may have (createKey's prefix bounds). */
export const MAX_PREFIX_LENGTH = 16;

const encoder = new TextEncoder();

/** The checksum a checksummed key ends with, given everything before it. */
export function checksumOf(head: string): string {
  const crc = crc32(encoder.encode(head));
  const bytes = new Uint8Array(4);
  new DataView(bytes.buffer).setUint32(0, crc);
  return base58Fixed(bytes);
}

/** A checksummed key from everything before its checksum: `head` and the checksum of it. */
export function withChecksum(head: string): string {
  return head + checksumOf(head);
}

/** The length of the random part (checksum included) of a checksummed key of `byteLength` bytes. */
export function checksummedBodyLength(byteLength: number): number {
  return base58Width(byteLength) + CHECKSUM_LENGTH;
}

/** Body lengths a checksummed key can have, one per byte length (the widths all differ). */
const BODY_LENGTHS = new Set(
  Array.from({ length: MAX_KEY_BYTES - MIN_KEY_BYTES + 1 }, (_, i) =>
    checksummedBodyLength(MIN_KEY_BYTES + i),
  ),
);
const LONGEST = MAX_PREFIX_LENGTH + 1 + checksummedBodyLength(MAX_KEY_BYTES);
const BODY = new RegExp(`^${BASE58_CLASS}+$`);
const PREFIX = /^[a-zA-Z0-9_]+$/;

/**
 * Whether `text` has the shape of a checksummed Latchkey key and its checksum is right: an
 * optional prefix (1 to 16 letters, digits or `_`) and `_`, a Base58 random part of one of
 * the fixed lengths, and the CRC-32 of everything before the last 6 characters. Pure and
 * offline: true does not mean the key exists, only that it is very unlikely to be random
 * text (one chance in 2^32). Plain-format keys answer false.
 */
export function looksLikeLatchkeyKey(text: string): boolean {
  if (text.length > LONGEST) return false;
  const cut = text.lastIndexOf("_");
  const body = cut < 0 ? text : text.slice(cut + 1);
  if (cut >= 0) {
    const prefix = text.slice(0, cut);
    if (prefix.length === 0 || prefix.length > MAX_PREFIX_LENGTH || !PREFIX.test(prefix)) {
      return false;
    }
  }
  if (!BODY_LENGTHS.has(body.length) || !BODY.test(body)) return false;
  const head = text.slice(0, -CHECKSUM_LENGTH);
  return text.slice(-CHECKSUM_LENGTH) === checksumOf(head);
}

/**
 * The regular expression (source text) a scanner can look for checksummed keys of one prefix
 * and byte length with: the prefix, `_` and exactly the random part's length, between word
 * boundaries. Without a prefix, just the random part. Matches still need `looksLikeLatchkeyKey`
 * (or the checksum rule) to tell real keys from look-alikes.
 */
export function scannerPattern(prefix: string | undefined, byteLength = MIN_KEY_BYTES): string {
  const lead = prefix ? `${prefix}_` : "";
  return `\\b${lead}${BASE58_CLASS}{${checksummedBodyLength(byteLength)}}\\b`;
}
