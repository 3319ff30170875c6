import type { DescField } from "@bufbuild/protobuf";
import {
  findTooDeep,
  findUnsafeNumber,
  findUnstorableString,
  MAX_STRUCT_DEPTH,
  violationsFull,
} from "../domain/field-rules.js";
import type { Violation } from "../errors/service-error.js";
import { isPresent, satisfiesRequired } from "./presence.js";

/**
 * The checks of the field rules that look at more than one value, called by the generated
 * validators (validation.ts) where a message's rules ask for them.
 */

/** Exactly one field of `group` must be present. */
export function checkExactlyOne(
  group: DescField[],
  message: Record<string, unknown>,
  pointer: string,
  out: Violation[],
): void {
  const present = group.filter((f) => isPresent(message, f));
  const names = group.map((f) => f.jsonName);
  // Binary protobuf cannot tell an implicit number sent as 0 from one left out: with no other
  // member given, such a member counts as given, as a required one does (`cost` 0 over gRPC).
  if (present.length === 0 && group.some((f) => satisfiesRequired(message, f))) return;
  if (present.length === 0) {
    out.push({
      location: `${pointer}/${names[0]}`,
      message: `is required: give one of ${names.join(", ")}`,
    });
  } else if (present.length > 1) {
    const [first, second] = present as [DescField, DescField];
    out.push({
      location: `${pointer}/${second.jsonName}`,
      message: `cannot be given together with ${first.jsonName}`,
    });
  }
}

/** No two items of a list of messages may have the same value of `key`. */
export function checkUnique(key: DescField, items: unknown[], at: string, out: Violation[]): void {
  const seen = new Map<unknown, number>();
  for (let i = 0; i < items.length && !violationsFull(out); i++) {
    const value = (items[i] as Record<string, unknown>)[key.localName];
    const first = seen.get(value);
    if (first === undefined) seen.set(value, i);
    else {
      out.push({
        location: `${at}/${i}/${key.jsonName}`,
        message: `duplicates ${at}/${first}/${key.jsonName}: ${key.jsonName} must be unique`,
      });
    }
  }
}

/** A google.protobuf.Struct value (`meta`) within its bounds, and one PostgreSQL can store. */
export function checkStruct(
  bounds: { maxProps?: number; maxJsonBytes?: number },
  value: object,
  at: string,
  out: Violation[],
): void {
  if (bounds.maxProps !== undefined && Object.keys(value).length > bounds.maxProps) {
    out.push({
      location: at,
      message: `must have at most ${bounds.maxProps} top-level properties`,
    });
    return;
  }
  // First, so that the walks below recurse a bounded number of times.
  const deep = findTooDeep(value, at, MAX_STRUCT_DEPTH);
  if (deep !== undefined) {
    out.push({ location: deep, message: `nests deeper than ${MAX_STRUCT_DEPTH} levels` });
    return;
  }
  const unsafe = findUnsafeNumber(value, at);
  if (unsafe !== undefined) {
    out.push({ location: unsafe, message: "numbers must be finite and integers at most 2^53-1" });
    return;
  }
  const unstorable = findUnstorableString(value, at);
  if (unstorable !== undefined) {
    out.push(unstorable);
    return;
  }
  if (bounds.maxJsonBytes !== undefined) {
    const bytes = Buffer.byteLength(JSON.stringify(value));
    if (bytes > bounds.maxJsonBytes) {
      out.push({
        location: at,
        message: `must be at most ${bounds.maxJsonBytes} bytes as JSON (got ${bytes})`,
      });
    }
  }
}
