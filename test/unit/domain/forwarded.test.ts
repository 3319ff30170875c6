import { describe, expect, it } from "vitest";
import { clientAddress, isTrustedPeer, MAX_FORWARDED_HOPS } from "../../../src/domain/forwarded.js";
import { compileCidrs } from "../../../src/domain/networks.js";

const trusted = compileCidrs(["10.0.0.0/8", "::1"]);
const none = compileCidrs([]);

describe("the client address through trusted proxies", () => {
  it.each([
    ["an untrusted peer, whatever it forwards", "198.51.100.1", "203.0.113.9", "198.51.100.1"],
    ["a trusted peer without X-Forwarded-For", "10.0.0.1", undefined, "10.0.0.1"],
    ["a trusted peer's one entry", "10.0.0.1", "203.0.113.9", "203.0.113.9"],
    [
      "the first untrusted entry from the right",
      "10.0.0.1",
      "1.1.1.1, 203.0.113.9, 10.2.3.4",
      "203.0.113.9",
    ],
    ["the leftmost when every entry is trusted", "10.0.0.1", "10.9.9.9, 10.2.3.4", "10.9.9.9"],
    ["an IPv4-mapped trusted peer", "::ffff:10.0.0.1", "203.0.113.9", "203.0.113.9"],
    ["an IPv6 trusted peer", "::1", "2001:db8::5", "2001:db8::5"],
    ["an IPv4 entry with a port", "10.0.0.1", "203.0.113.9:5000", "203.0.113.9"],
    ["an IPv6 entry with brackets and a port", "10.0.0.1", "[2001:db8::5]:443", "2001:db8::5"],
    ["empty entries skipped", "10.0.0.1", " , 203.0.113.9 ,", "203.0.113.9"],
  ])("%s", (_, peer, xff, client) => {
    expect(clientAddress(peer, xff, trusted)).toBe(client);
  });

  it.each([
    ["no peer", undefined, "203.0.113.9"],
    ["a peer that is no address", "somewhere", undefined],
    ["an entry that is no address", "10.0.0.1", "203.0.113.9, bogus"],
    ["an unclosed bracket", "10.0.0.1", "[2001:db8::5"],
    [
      "a chain longer than the bound",
      "10.0.0.1",
      Array(MAX_FORWARDED_HOPS + 1)
        .fill("10.1.1.1")
        .join(","),
    ],
  ])("gives no client for %s", (_, peer, xff) => {
    expect(clientAddress(peer, xff, trusted)).toBeUndefined();
  });

  it("believes no X-Forwarded-For without trusted proxies", () => {
    expect(clientAddress("10.0.0.1", "203.0.113.9", none)).toBe("10.0.0.1");
  });
});

describe("whether the connection's peer is a trusted proxy", () => {
  it.each([
    ["10.1.2.3", true],
    ["::ffff:10.1.2.3", true],
    ["::1", true],
    ["198.51.100.1", false],
    ["not an address", false],
    [undefined, false],
  ])("%s: %s", (peer, expected) => {
    expect(isTrustedPeer(peer, trusted)).toBe(expected);
    expect(isTrustedPeer(peer, none)).toBe(false);
  });
});
