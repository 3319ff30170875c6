import {
  type LeakChange,
  type LeakPlace,
  type LeakPolicy,
  leakChange,
  leakDescription,
  placeDigest,
} from "../../domain/leaks.js";
import { keyDisable, keyLeakInsert, type LeakedKeyRow } from "../../storage/queries/key-leaks.js";
import { keyFind, keySoftDelete } from "../../storage/queries/keys.js";
import type { Deps } from "../deps.js";
import { type Change, mutateAs } from "../mutation.js";

/** The audit log's actor for changes a secret-scanning report makes. */
export const SECRET_SCANNING_ACTOR = "github_secret_scanning";

/**
 * The facts of one leak, as applied: everything a `key.leaked` notification says (which key
 * of which API and workspace, where it was found, the policy and what it did).
 */
export interface KeyLeaked {
  workspaceId: string;
  apiId: string;
  keyId: string;
  /** Where it was found, as the partner reported it: GitHub's `source` and `url`. */
  source: string;
  url: string;
  policy: LeakPolicy;
  /** What the policy did to the key: deleted, disabled, or nothing. */
  change: LeakChange;
  /** When the leak was applied (Unix ms). */
  reportedAt: number;
}

/**
 * Applies a reported leak of one key at one place, in one transaction with its audit records
 * and the invalidation of the key's cached verifications: `revoke` deletes the key (as
 * keys.deleteKey does, audited `key.delete`), `disable` turns it off (audited `key.update`),
 * `notify` changes nothing; every one writes `key.leaked`. Answers the leak's facts, or
 * undefined when nothing was written: the key was deleted meanwhile, or this key's leak at
 * this place was reported before (a partner may send a report twice).
 */
export function applyLeak(
  deps: Pick<Deps, "db" | "bus" | "clock" | "webhooks">,
  requestId: string,
  found: LeakedKeyRow,
  place: LeakPlace,
): Promise<KeyLeaked | undefined> {
  const actor = {
    type: "system" as const,
    id: SECRET_SCANNING_ACTOR,
    workspaceId: found.workspaceId,
    requestId,
  };
  return mutateAs(deps, actor, async (tx, change) => {
    // Locked: concurrent reports of one key take turns, and the second sees the first's work.
    const key = await keyFind(tx, found.workspaceId, found.id, true);
    if (!key) return undefined;
    const policy = found.leakPolicy;
    const fresh = await keyLeakInsert(tx, {
      keyId: key.id,
      digest: placeDigest(place),
      workspaceId: key.workspaceId,
      apiId: key.apiId,
      source: place.source,
      url: place.url,
      policy,
      reportedAt: change.now,
    });
    if (!fresh) return undefined;
    const what = leakChange(policy, key);
    const target = { resourceType: "key", resourceId: key.id };
    const ref = { keyId: key.id, apiId: key.apiId };
    if (what === "delete") {
      await keySoftDelete(tx, key.id, change.now);
      change.audit({
        event: "key.delete",
        ...target,
        description: `Revoked leaked key ${key.id}.`,
      });
      change.emit({ type: "key.deleted", data: { ...ref, permanent: false } });
    } else if (what === "disable") {
      await keyDisable(tx, key.id, change.now);
      change.audit({
        event: "key.update",
        ...target,
        description: `Disabled leaked key ${key.id}.`,
      });
      change.emit({ type: "key.updated", data: { ...ref, changed: ["enabled"] } });
    }
    const leak: KeyLeaked = {
      workspaceId: key.workspaceId,
      apiId: key.apiId,
      keyId: key.id,
      ...place,
      policy,
      change: what,
      reportedAt: change.now,
    };
    recordLeak(change, leak);
    change.invalidate({
      kind: "key",
      workspaceId: key.workspaceId,
      apiId: key.apiId,
      id: key.id,
      hash: key.hash,
    });
    return leak;
  });
}

/**
 * Records a leak in the transaction that applies it: the `key.leaked` audit record and the
 * `key.leaked` webhook event of the key's workspace, which commit with the change or not at
 * all. This is the one place a leak is announced.
 */
function recordLeak(change: Change, leak: KeyLeaked): void {
  change.audit({
    event: "key.leaked",
    resourceType: "key",
    resourceId: leak.keyId,
    description: leakDescription(leak.keyId, leak, leak.policy, leak.change),
  });
  const { keyId, apiId, source, url, policy, reportedAt } = leak;
  change.emit(
    {
      type: "key.leaked",
      data: { keyId, apiId, source, url, policy, change: leak.change, reportedAt },
    },
    leak.workspaceId,
  );
}
