/** A rate limit configured on a key or an identity. */
export interface ConfiguredLimit {
  id: string;
  name: string;
  limit: number;
  durationMs: number;
  autoApply: boolean;
}

/** A rate limit named in a verification request. */
export interface RequestedLimit {
  name: string;
  cost: number | undefined;
  limit: number | undefined;
  durationMs: number | undefined;
}

/** A limit a verification evaluates, with the counter it spends from. */
export interface PlannedLimit {
  /** Id of the configuration; "" for an ad-hoc limit. */
  id: string;
  name: string;
  limit: number;
  durationMs: number;
  cost: number;
  autoApply: boolean;
  /** Whose counter: a key's, or an identity's (shared by all its keys). */
  scope: "key" | "identity";
  /** The key id or identity id the counter belongs to. */
  owner: string;
}

/**
 * The limits a verification evaluates: every
 * auto-applied limit of the key and its identity with cost 1, a key limit shadowing an
 * identity limit of the same name. A requested name that is configured uses its configured
 * limit and window with the request's cost (1 by default): a `limit` or `duration` the
 * request gives for it is ignored, so a caller cannot widen a limit the owner set. Only a
 * name that is not configured, given with both `limit` and `duration`, is an ad-hoc limit
 * counted per key. A requested name that is neither is returned as `unknown` (412).
 */
export function planLimits(
  keyLimits: readonly ConfiguredLimit[],
  identityLimits: readonly ConfiguredLimit[],
  requested: readonly RequestedLimit[],
  keyId: string,
  identityId: string | null,
): { planned: PlannedLimit[]; unknown?: undefined } | { unknown: string; planned?: undefined } {
  const configured = new Map<string, PlannedLimit>();
  if (identityId !== null) {
    for (const c of identityLimits)
      configured.set(c.name, { ...c, cost: 1, scope: "identity", owner: identityId });
  }
  for (const c of keyLimits) configured.set(c.name, { ...c, cost: 1, scope: "key", owner: keyId });
  const planned = new Map<string, PlannedLimit>();
  for (const c of configured.values()) if (c.autoApply) planned.set(c.name, c);
  for (const r of requested) {
    const c = configured.get(r.name);
    if (c) {
      // A configured limit is never widened by the caller: its own limit and window count.
      planned.set(r.name, { ...c, cost: r.cost ?? 1 });
      continue;
    }
    if (r.limit !== undefined && r.durationMs !== undefined) {
      planned.set(r.name, {
        id: "",
        name: r.name,
        limit: r.limit,
        durationMs: r.durationMs,
        cost: r.cost ?? 1,
        autoApply: false,
        scope: "key",
        owner: keyId,
      });
      continue;
    }
    return { unknown: r.name };
  }
  return { planned: [...planned.values()] };
}

/** The identity limits that are not shadowed by a key limit of the same name. */
export function visibleIdentityLimits<T extends { name: string }>(
  identity: readonly T[],
  key: readonly { name: string }[],
): T[] {
  const names = new Set(key.map((k) => k.name));
  return identity.filter((i) => !names.has(i.name));
}
