import { BlockList, isIP } from "node:net";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  cidrProblem,
  cidrsContain,
  compileCidrs,
  type IpWords,
  ipProblem,
  parseCidr,
  parseIp,
} from "../../../src/domain/networks.js";

const ip = (text: string) => parseIp(text) as IpWords;
const contains = (ranges: string[], address: string) =>
  cidrsContain(compileCidrs(ranges), ip(address));

describe("addresses", () => {
  it.each([
    "0.0.0.0",
    "203.0.113.7",
    "255.255.255.255",
    "::",
    "::1",
    "2001:db8::1",
    "2001:DB8:0:0:0:0:0:1",
    "1:2:3:4:5:6:7:8",
    "1:2:3:4:5:6:7::",
    "::2:3:4:5:6:7:8",
    "::ffff:192.0.2.1",
    "64:ff9b::192.0.2.1",
    "1:2:3:4:5:6:192.0.2.1",
  ])("reads %s", (text) => {
    expect(parseIp(text)).toBeDefined();
    expect(ipProblem(text)).toBeUndefined();
  });

  it.each([
    "",
    "1.2.3",
    "1.2.3.4.5",
    "256.1.1.1",
    "01.2.3.4",
    "1.2.3.04",
    "1.2.3.4 ",
    " 1.2.3.4",
    "1.2.3.-4",
    "1:2:3:4:5:6:7:8:9",
    "1::2::3",
    ":::",
    "1:::2",
    ":1::",
    "12345::",
    "fe80::1%eth0",
    "[::1]",
    "::1.2.3",
    "1:2:3:4:5:6:7:1.2.3.4",
    "1.2.3.4:80",
    "g::1",
    "1:2:3:4:5:6:7:8::",
    "localhost",
  ])("refuses %j", (text) => {
    expect(parseIp(text)).toBeUndefined();
    expect(ipProblem(text)).toMatch(/must be an IPv4 or IPv6 address/);
  });

  it("reads an IPv4 address and its IPv4-mapped IPv6 form as one address", () => {
    expect(ip("192.0.2.1")).toEqual(ip("::ffff:192.0.2.1"));
    expect(ip("192.0.2.1")).toEqual(ip("::ffff:c000:201"));
  });

  it("agrees with Node's own parser on every text made of address characters", () => {
    const chars = fc.constantFrom(..."0123456789abcdefABCDEF:.".split(""));
    const texts = fc.oneof(
      fc.string({ unit: chars, maxLength: 45 }),
      fc.ipV4(),
      fc.ipV6(),
      fc.ipV4Extended(),
    );
    fc.assert(
      fc.property(texts, (text) => {
        // Node accepts nothing we refuse; it reads leading zeros in IPv6 groups as we do.
        expect(parseIp(text) !== undefined).toBe(isIP(text) !== 0);
      }),
      { numRuns: 5000 },
    );
  });
});

describe("ranges", () => {
  it.each([
    ["10.0.0.0/8"],
    ["0.0.0.0/0"],
    ["203.0.113.7/32"],
    ["203.0.113.7"],
    ["2001:db8::/32"],
    ["::/0"],
    ["::1/128"],
    ["::1"],
    ["::ffff:0:0/96"],
  ])("reads %s", (text) => {
    expect(cidrProblem(text)).toBeUndefined();
  });

  it.each([
    ["10.0.0.1/8", "has host bits set after the /8 prefix: did you mean 10.0.0.0/8?"],
    ["192.168.1.5/24", "has host bits set after the /24 prefix: did you mean 192.168.1.0/24?"],
    ["2001:db8::1/32", "has host bits set after the /32 prefix: did you mean 2001:db8::/32?"],
    ["2001:db8:0:1::/48", "has host bits set after the /48 prefix: did you mean 2001:db8::/48?"],
    ["1:0:0:2:0:0:0:3/64", "has host bits set after the /64 prefix: did you mean 1:0:0:2::/64?"],
    ["10.0.0.0/33", "has a prefix length that is not a whole number from 0 to 32"],
    ["::/129", "has a prefix length that is not a whole number from 0 to 128"],
    ["10.0.0.0/", "has a prefix length that is not a whole number from 0 to 32"],
    ["10.0.0.0/08", "has a prefix length that is not a whole number from 0 to 32"],
    ["10.0.0.0/-1", "has a prefix length that is not a whole number from 0 to 32"],
    ["10.0.0.0/8/8", "has a prefix length that is not a whole number from 0 to 32"],
    ["10.0.0/8", "must be an IPv4 or IPv6 address with an optional /prefix, e.g. 10.0.0.0/8"],
    ["/8", "must be an IPv4 or IPv6 address with an optional /prefix, e.g. 10.0.0.0/8"],
    ["everywhere", "must be an IPv4 or IPv6 address with an optional /prefix, e.g. 10.0.0.0/8"],
    [`${"1".repeat(50)}`, "must be an IP address or a CIDR range (at most 49 characters)"],
  ])("refuses %j: %s", (text, problem) => {
    expect(parseCidr(text).problem).toBe(problem);
  });

  it("matches the addresses of a range and no others", () => {
    expect(contains(["10.0.0.0/8"], "10.255.1.2")).toBe(true);
    expect(contains(["10.0.0.0/8"], "11.0.0.0")).toBe(false);
    expect(contains(["203.0.113.7"], "203.0.113.7")).toBe(true);
    expect(contains(["203.0.113.7"], "203.0.113.8")).toBe(false);
    expect(contains(["0.0.0.0/0"], "198.51.100.1")).toBe(true);
    expect(contains(["0.0.0.0/0"], "2001:db8::1")).toBe(false);
    expect(contains(["2001:db8::/32"], "2001:db8:ffff::1")).toBe(true);
    expect(contains(["2001:db8::/32"], "2001:db9::1")).toBe(false);
    expect(contains(["::/0"], "2001:db8::1")).toBe(true);
    expect(contains(["10.0.0.0/8", "2001:db8::/32"], "2001:db8::1")).toBe(true);
    expect(contains([], "10.0.0.1")).toBe(false);
  });

  it("matches an IPv4 client written in its IPv4-mapped IPv6 form", () => {
    expect(contains(["10.0.0.0/8"], "::ffff:10.1.2.3")).toBe(true);
    expect(contains(["10.0.0.0/8"], "::ffff:11.1.2.3")).toBe(false);
  });

  it.each([
    ["ipv4", fc.ipV4(), 32],
    ["ipv6", fc.ipV6(), 128],
  ] as const)(
    "agrees with Node's BlockList on random %s ranges and addresses",
    (family, address, width) => {
      const cases = fc.tuple(address, fc.integer({ min: 0, max: width }), address);
      fc.assert(
        fc.property(cases, ([base, length, client]) => {
          const list = new BlockList();
          list.addSubnet(base, length, family);
          const network = parseCidr(`${base}/${length}`);
          // A base with host bits set is refused; its network is what BlockList matches.
          const text = network.cidr
            ? `${base}/${length}`
            : (network.problem.match(/mean (.*)\?$/)?.[1] as string);
          expect(contains([text], client)).toBe(list.check(client, family));
        }),
        { numRuns: 2000 },
      );
    },
  );

  it("skips an entry that does not parse instead of widening the rule", () => {
    expect(contains(["nonsense", "10.0.0.0/8"], "10.0.0.1")).toBe(true);
    expect(contains(["nonsense"], "10.0.0.1")).toBe(false);
  });
});
