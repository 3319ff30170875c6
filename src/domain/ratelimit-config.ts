/** The settings of one named rate limit configured on a key or an identity. */
export interface RatelimitSetting {
  name: string;
  limit: number;
  durationMs: number;
  autoApply: boolean;
}

/** A stored setting, with its id. */
export interface StoredSetting extends RatelimitSetting {
  id: string;
}

/** What replacing a list of settings by another changes. */
export interface SettingsDiff {
  create: RatelimitSetting[];
  /** Stored settings (same id) with their new values; unchanged ones are not listed. */
  update: StoredSetting[];
  remove: StoredSetting[];
}

/**
 * Replacing the configured rate limits by a new list, matched by name: a name that stays
 * keeps its id (and is updated if its values changed), a new name is created, a name
 * that is gone is removed.
 */
export function diffRatelimits(
  stored: readonly StoredSetting[],
  desired: readonly RatelimitSetting[],
): SettingsDiff {
  const byName = new Map(stored.map((s) => [s.name, s]));
  const wanted = new Set(desired.map((d) => d.name));
  const diff: SettingsDiff = { create: [], update: [], remove: [] };
  for (const d of desired) {
    const s = byName.get(d.name);
    if (!s) diff.create.push(d);
    else if (s.limit !== d.limit || s.durationMs !== d.durationMs || s.autoApply !== d.autoApply) {
      diff.update.push({ ...d, id: s.id });
    }
  }
  for (const s of stored) if (!wanted.has(s.name)) diff.remove.push(s);
  return diff;
}
