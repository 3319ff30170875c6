import { generateKeyPairSync, sign } from "node:crypto";
import { describe, expect, it } from "vitest";
import {
  KeyListError,
  keyIdentifierOf,
  parseKeyList,
  parsePemKeys,
  readPublicKeySetting,
  signatureMatches,
} from "../../../src/domain/github-keys.js";
import { leakChange, leakDescription, placeDigest } from "../../../src/domain/leaks.js";
import {
  labelMatches,
  REPORT_BOUNDS,
  readReport,
} from "../../../src/domain/secret-scanning-report.js";

const p256 = generateKeyPairSync("ec", { namedCurve: "prime256v1" });
const PEM = p256.publicKey.export({ type: "spki", format: "pem" }).toString();

describe("leak policies", () => {
  it.each([
    ["revoke", true, "delete"],
    ["revoke", false, "delete"],
    ["disable", true, "disable"],
    ["disable", false, "none"],
    ["notify", true, "none"],
  ] as const)("%s of a key enabled=%s: %s", (policy, enabled, change) => {
    expect(leakChange(policy, { enabled })).toBe(change);
  });

  it("describe where a leak was found and what it did", () => {
    const place = { source: "commit", url: "https://github.com/o/r/commit/1" };
    expect(leakDescription("key_1", place, "revoke", "delete")).toBe(
      "Key key_1 was reported leaked in commit at https://github.com/o/r/commit/1; policy revoke: the key was revoked.",
    );
    expect(leakDescription("key_1", { source: "npm", url: "" }, "disable", "none")).toBe(
      "Key key_1 was reported leaked in npm; policy disable: the key was disabled already.",
    );
  });

  it("tell places apart by source and URL, never by their concatenation alone", () => {
    expect(placeDigest({ source: "a", url: "bc" })).not.toBe(
      placeDigest({ source: "ab", url: "c" }),
    );
    expect(placeDigest({ source: "a", url: "b" })).toBe(placeDigest({ source: "a", url: "b" }));
  });
});

describe("secret-scanning reports", () => {
  it("read matches, with defaults for the optional fields and extra fields ignored", () => {
    expect(
      readReport([{ token: "t", type: "x", url: "u", source: "content", more: 1 }, { token: "s" }]),
    ).toEqual({
      matches: [
        { token: "t", type: "x", url: "u", source: "content" },
        { token: "s", type: "", url: "", source: "unknown" },
      ],
    });
  });

  it("name every field that breaks a bound", () => {
    const long = "x".repeat(REPORT_BOUNDS.maxUrlLength + 1);
    expect(readReport([{ token: "" }, { token: "t", url: long, source: 1 }, null])).toEqual({
      violations: [
        { location: "/0/token", message: "must not be empty" },
        { location: "/1/url", message: `must be at most ${REPORT_BOUNDS.maxUrlLength} characters` },
        { location: "/1/source", message: "must be a string" },
        { location: "/2", message: "must be an object" },
      ],
    });
  });

  it("label each match by whether its token was found", () => {
    const matches = [
      { token: "a", type: "t", url: "", source: "content" },
      { token: "b", type: "t", url: "", source: "content" },
    ];
    expect(labelMatches(matches, (t) => t === "a").map((l) => l.label)).toEqual([
      "true_positive",
      "false_positive",
    ]);
  });
});

describe("GitHub's public keys", () => {
  it("are read from PEM (literal \\n too), identified by the SHA-256 of their DER form", () => {
    const [key] = parsePemKeys(PEM.replaceAll("\n", "\\n"));
    expect(key?.id).toBe(keyIdentifierOf(p256.publicKey));
    expect(key?.id).toMatch(/^[0-9a-f]{64}$/);
  });

  it("are read from a key list, leaving out what is not a P-256 key", () => {
    const rsa = generateKeyPairSync("rsa", { modulusLength: 1024 }).publicKey;
    const list = {
      public_keys: [
        { key_identifier: "gh1", key: PEM, is_current: true },
        { key_identifier: "rsa", key: rsa.export({ type: "spki", format: "pem" }) },
        { key_identifier: "bad", key: "nope" },
      ],
    };
    expect(parseKeyList(list).map((k) => k.id)).toEqual(["gh1"]);
    expect(() => parseKeyList({ public_keys: [] })).toThrow(KeyListError);
  });

  it("are named by a URL, a key list or PEM in the setting, and refused otherwise", () => {
    expect(readPublicKeySetting(" https://keys.example/list ")).toEqual({
      kind: "url",
      url: "https://keys.example/list",
    });
    const inline = readPublicKeySetting(
      JSON.stringify({ public_keys: [{ key_identifier: "k", key: PEM }] }),
    );
    expect(inline.kind === "keys" && inline.keys.map((k) => k.id)).toEqual(["k"]);
    expect(() => readPublicKeySetting("{")).toThrow(/not valid JSON/);
    expect(() => readPublicKeySetting("hello")).toThrow(/no PEM/);
  });

  it("check a base64 DER signature of the exact body", () => {
    const body = Buffer.from('[{"token":"t"}]');
    const good = sign("sha256", body, p256.privateKey).toString("base64");
    expect(signatureMatches(p256.publicKey, body, good)).toBe(true);
    expect(signatureMatches(p256.publicKey, Buffer.from('[{"token": "t"}]'), good)).toBe(false);
    expect(signatureMatches(p256.publicKey, body, "AAAA")).toBe(false);
    expect(signatureMatches(p256.publicKey, body, "not base64!")).toBe(false);
    expect(signatureMatches(p256.publicKey, body, "")).toBe(false);
  });
});
