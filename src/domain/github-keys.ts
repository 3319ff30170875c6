import { createPublicKey, hash, type KeyObject, verify } from "node:crypto";

/** A public key a secret-scanning report may be signed with, by the identifier it is named by. */
export interface TrustedKey {
  id: string;
  key: KeyObject;
}

/** What GITHUB_SECRET_SCANNING_PUBLIC_KEYS says: keys given inline, or where to fetch them. */
export type PublicKeySetting = { kind: "url"; url: string } | { kind: "keys"; keys: TrustedKey[] };

/** Thrown for a key list or PEM text that holds no usable key; the message says why. */
export class KeyListError extends Error {
  override name = "KeyListError";
}

/** The most keys a list may hold: GitHub's has a handful (current and previous ones). */
export const MAX_TRUSTED_KEYS = 100;
/** Longest key identifier and signature header read (GitHub's: 64 hex digits, ~96 base64). */
export const MAX_KEY_ID_LENGTH = 256;
export const MAX_SIGNATURE_LENGTH = 512;

const PEM_BLOCK = /-----BEGIN PUBLIC KEY-----[\s\S]*?-----END PUBLIC KEY-----/g;

/** A P-256 public key from PEM, or undefined when the text is not one. */
function p256(pem: string): KeyObject | undefined {
  try {
    const key = createPublicKey(pem);
    return key.asymmetricKeyType === "ec" && key.asymmetricKeyDetails?.namedCurve === "prime256v1"
      ? key
      : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The identifier of a key given as PEM: the hex SHA-256 of its DER SubjectPublicKeyInfo.
 * (A key list names its keys itself; PEM text has no names, so they are derived.)
 */
export function keyIdentifierOf(key: KeyObject): string {
  return hash("sha256", key.export({ type: "spki", format: "der" }), "hex");
}

/** Every `PUBLIC KEY` block of PEM text (literal `\n` read as line breaks), each P-256. */
export function parsePemKeys(text: string): TrustedKey[] {
  const blocks = text.replaceAll("\\n", "\n").match(PEM_BLOCK) ?? [];
  if (blocks.length === 0) throw new KeyListError("no PEM 'PUBLIC KEY' block");
  if (blocks.length > MAX_TRUSTED_KEYS)
    throw new KeyListError(`more than ${MAX_TRUSTED_KEYS} keys`);
  return blocks.map((pem, i) => {
    const key = p256(pem);
    if (!key) throw new KeyListError(`PEM key ${i + 1} is not an ECDSA P-256 public key`);
    return { id: keyIdentifierOf(key), key };
  });
}

/**
 * The keys of a key list in GitHub's shape, `{public_keys: [{key_identifier, key, is_current}]}`.
 * Entries that are not P-256 keys are left out (a list may gain kinds of key later); a list
 * with none left is an error.
 */
export function parseKeyList(body: unknown): TrustedKey[] {
  const list = (body as { public_keys?: unknown } | null)?.public_keys;
  if (!Array.isArray(list)) throw new KeyListError("no 'public_keys' array");
  const keys: TrustedKey[] = [];
  for (const entry of list.slice(0, MAX_TRUSTED_KEYS)) {
    const { key_identifier: id, key: pem } = (entry ?? {}) as Record<string, unknown>;
    if (typeof id !== "string" || id === "" || id.length > MAX_KEY_ID_LENGTH) continue;
    const key = typeof pem === "string" ? p256(pem) : undefined;
    if (key) keys.push({ id, key });
  }
  if (keys.length === 0) throw new KeyListError("no ECDSA P-256 key in 'public_keys'");
  return keys;
}

/**
 * Reads the setting: an http(s) URL of a key list, a key list's JSON itself, or PEM public
 * keys. Throws a KeyListError saying what is wrong.
 */
export function readPublicKeySetting(raw: string): PublicKeySetting {
  const text = raw.trim();
  if (/^https?:\/\//i.test(text)) {
    try {
      return { kind: "url", url: new URL(text).toString() };
    } catch {
      throw new KeyListError("not a valid URL");
    }
  }
  if (text.startsWith("{")) {
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      throw new KeyListError("a key list that is not valid JSON");
    }
    return { kind: "keys", keys: parseKeyList(body) };
  }
  return { kind: "keys", keys: parsePemKeys(text) };
}

/**
 * Whether `signature` (base64 of a DER ECDSA signature) signs `body` with SHA-256 under
 * `key`. A malformed signature is simply not valid.
 */
export function signatureMatches(key: KeyObject, body: Uint8Array, signature: string): boolean {
  if (signature.length === 0 || signature.length > MAX_SIGNATURE_LENGTH) return false;
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(signature)) return false;
  try {
    return verify("sha256", body, key, Buffer.from(signature, "base64"));
  } catch {
    return false;
  }
}
