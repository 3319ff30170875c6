import { hash } from "node:crypto";

/**
 * What a reported leak of a key does, per its API: `revoke` deletes the key, `disable` turns
 * it off (`enabled: false`), `notify` changes nothing. Every policy records the report.
 */
export type LeakPolicy = "revoke" | "disable" | "notify";

/** The policy of an API that names none. */
export const DEFAULT_LEAK_POLICY: LeakPolicy = "disable";

/** The change a leak makes to a live key: deleted, disabled, or left as it is. */
export type LeakChange = "delete" | "disable" | "none";

/**
 * The change `policy` makes to a live key whose `enabled` flag is given: a key already
 * disabled is not disabled again (nothing to write but the report).
 */
export function leakChange(policy: LeakPolicy, key: { enabled: boolean }): LeakChange {
  switch (policy) {
    case "revoke":
      return "delete";
    case "disable":
      return key.enabled ? "disable" : "none";
    case "notify":
      return "none";
  }
}

/** Where a leak was found, as the partner reported it, with bounds checked by the caller. */
export interface LeakPlace {
  /** The partner's name for where it was found (GitHub: `content`, `commit`, `npm`, …). */
  source: string;
  /** The public URL of the finding; may be empty. */
  url: string;
}

/** A short, human-readable sentence of a leak, for the audit record's description. */
export function leakDescription(
  keyId: string,
  place: LeakPlace,
  policy: LeakPolicy,
  change: LeakChange,
): string {
  const where = place.url === "" ? `in ${place.source}` : `in ${place.source} at ${place.url}`;
  const done =
    change === "delete"
      ? "the key was revoked"
      : change === "disable"
        ? "the key was disabled"
        : policy === "disable"
          ? "the key was disabled already"
          : "the key was left as it is";
  return `Key ${keyId} was reported leaked ${where}; policy ${policy}: ${done}.`;
}

/**
 * What identifies a place a leak was reported at: SHA-256 (base64) of its source and URL.
 * The same key reported at the same place again is the same report.
 */
export function placeDigest(place: LeakPlace): string {
  return hash("sha256", `${place.source}\0${place.url}`, "base64");
}
