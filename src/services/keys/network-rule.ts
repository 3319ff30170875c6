import { type CidrSet, cidrsContain, compileCidrs, parseIp } from "../../domain/networks.js";
import type { KeyRecordRow } from "../../storage/queries/key-records.js";

/**
 * The compiled ranges of each list of a cached record. Keyed by the list itself: a record
 * copied with a new balance (cached-balance.ts) keeps the same list, so it is compiled once
 * per loaded record, never per verification.
 */
const compiled = new WeakMap<readonly string[], CidrSet>();

/**
 * Whether the network rule of a key lets a verification from `clientIp` through: the key's own
 * ranges, else its API's; no ranges, no rule. With a rule, a verification that names no client
 * address is refused: an allow-list that omitting a field bypasses would allow anyone.
 */
export function networkAllows(record: KeyRecordRow, clientIp: string | undefined): boolean {
  const list = record.allowedCidrs ?? record.apiAllowedCidrs;
  if (list === null) return true;
  const ip = clientIp === undefined ? undefined : parseIp(clientIp);
  if (ip === undefined) return false;
  let set = compiled.get(list);
  if (set === undefined) {
    set = compileCidrs(list);
    compiled.set(list, set);
  }
  return cidrsContain(set, ip);
}
