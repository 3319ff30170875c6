import type { MessageInitShape } from "@bufbuild/protobuf";
import type { RatelimitRequest, RatelimitSchema } from "../../gen/latchkey/v2/common_pb.js";
import { newId } from "../domain/ids.js";
import { diffRatelimits, type RatelimitSetting } from "../domain/ratelimit-config.js";
import type { Queryable } from "../storage/db.js";
import {
  type RatelimitRow,
  ratelimitDelete,
  ratelimitInsert,
  ratelimitUpdate,
} from "../storage/queries/ratelimits.js";
import type { Change } from "./mutation.js";

/**
 * Settings from request objects; `autoApply` is true when omitted, so a limit set at creation
 * without the field applies.
 */
export function settingsFromRequest(list: readonly RatelimitRequest[]): RatelimitSetting[] {
  return list.map((r) => ({
    name: r.name,
    limit: Number(r.limit),
    durationMs: Number(r.duration),
    autoApply: r.autoApply ?? true,
  }));
}

/** A stored configuration as returned by reads. */
export function toRatelimitMessage(row: RatelimitRow): MessageInitShape<typeof RatelimitSchema> {
  return {
    id: row.id,
    name: row.name,
    limit: BigInt(row.limit),
    duration: BigInt(row.durationMs),
    autoApply: row.autoApply,
  };
}

/** Whose rate limits: an identity's or a key's. */
export type RatelimitOwner = { workspaceId: string } & (
  | { identityId: string; keyId?: undefined }
  | { keyId: string; identityId?: undefined }
);

/**
 * Replaces the configured rate limits of an owner by `desired`, matched by name (kept names
 * keep their ids), with an audit record per created, updated and removed limit.
 * Returns the configurations after the change, by name.
 */
export async function replaceRatelimits(
  tx: Queryable,
  change: Change,
  owner: RatelimitOwner,
  stored: readonly RatelimitRow[],
  desired: readonly RatelimitSetting[],
): Promise<RatelimitRow[]> {
  const diff = diffRatelimits(stored, desired);
  const row = (s: RatelimitSetting, id: string): RatelimitRow => ({
    ...s,
    id,
    workspaceId: owner.workspaceId,
    identityId: owner.identityId ?? null,
    keyId: owner.keyId ?? null,
  });
  const created = diff.create.map((s) => row(s, newId("rl")));
  const updated = diff.update.map((s) => row(s, s.id));
  await ratelimitDelete(
    tx,
    diff.remove.map((s) => s.id),
  );
  await ratelimitUpdate(tx, updated, change.now);
  await ratelimitInsert(tx, created, change.now);
  const subject = owner.identityId ? `identity ${owner.identityId}` : `key ${owner.keyId}`;
  const audit = (event: string, r: { id: string; name: string }, verb: string) =>
    change.audit({
      event,
      resourceType: "ratelimit",
      resourceId: r.id,
      description: `${verb} rate limit ${r.name} of ${subject}.`,
    });
  for (const r of created) audit("ratelimit.create", r, "Created");
  for (const r of updated) audit("ratelimit.update", r, "Updated");
  for (const r of diff.remove) audit("ratelimit.delete", r, "Deleted");
  const removed = new Set(diff.remove.map((s) => s.id));
  const changed = new Map(updated.map((r) => [r.id, r]));
  return [
    ...stored.filter((s) => !removed.has(s.id)).map((s) => changed.get(s.id) ?? s),
    ...created,
  ].sort((a, b) => a.name.localeCompare(b.name));
}

/** Settings with one entry per name: a name given twice keeps its last settings. */
export function lastPerName(settings: readonly RatelimitSetting[]): RatelimitSetting[] {
  return [...new Map(settings.map((s) => [s.name, s])).values()];
}
