/**
 * IP addresses and network ranges (CIDR), for the network rules of keys: a key (or its API)
 * may list the ranges its verifications must come from. Pure: the text forms are parsed here,
 * not by the operating system, so that the rules are the same on every machine and a range
 * can be checked for stray host bits.
 *
 * Every address is held as four 32-bit words of the IPv6 space; an IPv4 address is its
 * IPv4-mapped form (`::ffff:a.b.c.d`), so an IPv4 client written either way matches IPv4
 * ranges, and an IPv4 range `a.b.c.d/p` is the IPv6 range of prefix `96 + p`.
 */

/** An address: four 32-bit words, most significant first. */
export type IpWords = readonly [number, number, number, number];

/** A network range: its first address and its prefix length in the IPv6 space (0 to 128). */
export interface Cidr {
  words: IpWords;
  prefix: number;
}

/** The most ranges a key or an API may list. */
export const MAX_CIDRS = 100;

/** The longest text of a range (an IPv6 address with an embedded IPv4 one, and `/128`). */
const MAX_CIDR_TEXT = 49;

const V4_MAPPED = 0xffff;

/** Parses a dotted IPv4 address (four decimal octets, no leading zeros) to its 32-bit value. */
function parseV4(text: string): number | undefined {
  const parts = text.split(".");
  if (parts.length !== 4) return undefined;
  let value = 0;
  for (const part of parts) {
    // A leading zero reads as octal to some parsers and decimal to others: refused.
    if (!/^(0|[1-9][0-9]{0,2})$/.test(part)) return undefined;
    const octet = Number(part);
    if (octet > 255) return undefined;
    value = value * 256 + octet;
  }
  return value;
}

/** Parses groups of 1 to 4 hex digits separated by `:`, into 16-bit values. */
function hexGroups(text: string): number[] | undefined {
  if (text === "") return [];
  const groups: number[] = [];
  for (const g of text.split(":")) {
    if (!/^[0-9a-fA-F]{1,4}$/.test(g)) return undefined;
    groups.push(Number.parseInt(g, 16));
  }
  return groups;
}

/** Parses an IPv6 address in the forms of RFC 4291 §2.2 (no zone, no brackets) to 8 groups. */
function parseV6(text: string): number[] | undefined {
  let head = text;
  let tail: number[] = [];
  // An embedded IPv4 address stands for the last two groups.
  const lastColon = text.lastIndexOf(":");
  if (text.includes(".", lastColon)) {
    const v4 = parseV4(text.slice(lastColon + 1));
    if (v4 === undefined) return undefined;
    tail = [Math.floor(v4 / 0x10000), v4 % 0x10000];
    head = text.slice(0, lastColon + 1);
    // "::1.2.3.4" keeps its "::"; "64:ff9b::1.2.3.4" likewise; "1:2:3:4:5:6:1.2.3.4" drops the ":".
    if (!head.endsWith("::")) head = head.slice(0, -1);
  }
  const gap = head.indexOf("::");
  if (gap < 0) {
    const groups = hexGroups(head);
    if (!groups || groups.length + tail.length !== 8) return undefined;
    return [...groups, ...tail];
  }
  if (head.indexOf("::", gap + 1) >= 0) return undefined;
  const before = hexGroups(head.slice(0, gap));
  const after = hexGroups(head.slice(gap + 2));
  if (!before || !after) return undefined;
  const missing = 8 - before.length - after.length - tail.length;
  // "::" stands for at least one group of zeros.
  if (missing < 1) return undefined;
  return [...before, ...new Array<number>(missing).fill(0), ...after, ...tail];
}

function wordsOfGroups(g: number[]): IpWords {
  const w = (i: number) => ((g[i] as number) * 0x10000 + (g[i + 1] as number)) >>> 0;
  return [w(0), w(2), w(4), w(6)];
}

/** The family a text names: "v4" for dotted IPv4, "v6" for anything with a colon. */
function familyOf(text: string): "v4" | "v6" {
  return text.includes(":") ? "v6" : "v4";
}

/** Parses an IPv4 or IPv6 address; undefined when the text is neither. */
export function parseIp(text: string): IpWords | undefined {
  if (text.length === 0 || text.length > 45) return undefined;
  if (familyOf(text) === "v4") {
    const v4 = parseV4(text);
    return v4 === undefined ? undefined : [0, 0, V4_MAPPED, v4];
  }
  const groups = parseV6(text);
  return groups ? wordsOfGroups(groups) : undefined;
}

/** The mask of the bits of word `i` (0 to 3) a prefix covers. */
function maskOf(prefix: number, i: number): number {
  const bits = Math.min(32, Math.max(0, prefix - 32 * i));
  return bits === 0 ? 0 : (0xffffffff << (32 - bits)) >>> 0;
}

/** The first address of the range of `words` with this prefix (its host bits cleared). */
function networkOf(words: IpWords, prefix: number): IpWords {
  return [
    (words[0] & maskOf(prefix, 0)) >>> 0,
    (words[1] & maskOf(prefix, 1)) >>> 0,
    (words[2] & maskOf(prefix, 2)) >>> 0,
    (words[3] & maskOf(prefix, 3)) >>> 0,
  ];
}

/** Writes a range's network address back, in the family it was given in, for a message. */
function formatNetwork(words: IpWords, family: "v4" | "v6"): string {
  if (family === "v4") {
    const v = words[3];
    return [v >>> 24, (v >>> 16) & 255, (v >>> 8) & 255, v & 255].join(".");
  }
  const groups = words.flatMap((w) => [(w >>> 16).toString(16), (w & 0xffff).toString(16)]);
  // The longest run of two or more zero groups becomes "::" (RFC 5952).
  let best = { at: -1, length: 1 };
  for (let i = 0; i < 8; ) {
    let j = i;
    while (j < 8 && groups[j] === "0") j++;
    if (j - i > best.length) best = { at: i, length: j - i };
    i = j === i ? i + 1 : j;
  }
  if (best.at < 0) return groups.join(":");
  const left = groups.slice(0, best.at).join(":");
  const right = groups.slice(best.at + best.length).join(":");
  return `${left}::${right}`;
}

/** A range, or why its text is not one. */
export type CidrResult =
  | { cidr: Cidr; problem?: undefined }
  | { problem: string; cidr?: undefined };

/**
 * Parses a range: an address with a prefix length (`10.0.0.0/8`, `2001:db8::/32`), or an
 * address alone for that one host (`/32` or `/128`). The address must be the range's first
 * one: `10.0.0.1/8` is refused with the range it probably meant, since a host address with a
 * prefix may mean either the host or its network.
 */
export function parseCidr(text: string): CidrResult {
  if (text.length > MAX_CIDR_TEXT) {
    return {
      problem: `must be an IP address or a CIDR range (at most ${MAX_CIDR_TEXT} characters)`,
    };
  }
  const slash = text.indexOf("/");
  const address = slash < 0 ? text : text.slice(0, slash);
  const family = familyOf(address);
  const words = parseIp(address);
  if (!words) {
    return { problem: "must be an IPv4 or IPv6 address with an optional /prefix, e.g. 10.0.0.0/8" };
  }
  const width = family === "v4" ? 32 : 128;
  let length = width;
  if (slash >= 0) {
    const digits = text.slice(slash + 1);
    if (!/^(0|[1-9][0-9]{0,2})$/.test(digits) || Number(digits) > width) {
      return { problem: `has a prefix length that is not a whole number from 0 to ${width}` };
    }
    length = Number(digits);
  }
  const prefix = family === "v4" ? 96 + length : length;
  const network = networkOf(words, prefix);
  if (network.some((w, i) => w !== words[i])) {
    const meant = `${formatNetwork(network, family)}/${length}`;
    return { problem: `has host bits set after the /${length} prefix: did you mean ${meant}?` };
  }
  return { cidr: { words, prefix } };
}

/** The violation message of an address's text, or undefined when it is one. */
export function ipProblem(text: string): string | undefined {
  return parseIp(text)
    ? undefined
    : "must be an IPv4 or IPv6 address, e.g. 203.0.113.7 or 2001:db8::1";
}

/** The violation message of a range's text, or undefined when it is one. */
export function cidrProblem(text: string): string | undefined {
  return parseCidr(text).problem;
}

/** A list of ranges as stored: null for none (an empty list is no rule, stored as none). */
export function storedCidrs(list: readonly string[]): string[] | null {
  return list.length === 0 ? null : [...list];
}

/** A range as matched: its first address and the mask of each of its words. */
interface CompiledRange {
  words: IpWords;
  masks: IpWords;
}

/** Ranges parsed once, to test addresses against. */
export interface CidrSet {
  readonly ranges: readonly CompiledRange[];
}

/**
 * The ranges of a list that was validated when it was stored; an entry that no longer parses
 * (which validation makes impossible) matches nothing, so a rule never widens by accident.
 */
export function compileCidrs(texts: readonly string[]): CidrSet {
  const ranges: CompiledRange[] = [];
  for (const t of texts) {
    const { cidr } = parseCidr(t);
    if (!cidr) continue;
    const p = cidr.prefix;
    ranges.push({
      words: cidr.words,
      masks: [maskOf(p, 0), maskOf(p, 1), maskOf(p, 2), maskOf(p, 3)],
    });
  }
  return { ranges };
}

/** True when the address lies in one of the ranges: four masked compares per range. */
export function cidrsContain(set: CidrSet, ip: IpWords): boolean {
  for (const { words, masks } of set.ranges) {
    if (
      (ip[0] & masks[0]) >>> 0 === words[0] &&
      (ip[1] & masks[1]) >>> 0 === words[1] &&
      (ip[2] & masks[2]) >>> 0 === words[2] &&
      (ip[3] & masks[3]) >>> 0 === words[3]
    ) {
      return true;
    }
  }
  return false;
}
