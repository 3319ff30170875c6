import { createHash } from "node:crypto";
import type { Given } from "../given.js";

/** Every setting a key can have, so that reading it shows each field's encoding on every door. */
export async function fullKey(g: Given) {
  const apiId = await g.api();
  await g.role("reader", ["docs.read"]);
  const created = await g.key(apiId, {
    name: "full",
    externalId: "alice",
    meta: { plan: "pro", seats: 3, tags: ["a", "b"], nested: { on: true, off: null } },
    roles: ["reader"],
    permissions: ["docs.write"],
    expires: g.now + 86_400_000,
    credits: { remaining: 10, refill: { interval: "monthly", amount: 20, refillDay: 3 } },
    ratelimits: [{ name: "requests", limit: 5, duration: 60_000, autoApply: true }],
    allowedCidrs: ["10.0.0.0/8", "2001:db8::/32"],
  });
  return { apiId, ...created };
}

/** An address inside the network ranges of `fullKey`. */
export const INSIDE = "2001:db8::7";

/** A key with no settings, for calls refused before its settings matter. */
export async function plainKey(g: Given) {
  return g.key(await g.api());
}

/** The SHA-256 (hex) of a secret unique to this setup, registered as a placeholder. */
export function hashOf(g: Given, label: string): string {
  const hash = createHash("sha256").update(`${g.workspaceId}:${label}`).digest("hex");
  g.know("hash", hash);
  return hash;
}
