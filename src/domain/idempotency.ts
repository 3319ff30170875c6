import { createHash } from "node:crypto";
import type { DescMessage, MessageShape } from "@bufbuild/protobuf";
import { toBinary } from "@bufbuild/protobuf";

/**
 * How long an idempotency key is remembered: a repeat within this window answers the first
 * call's outcome; after it the key is free again and its record is deleted. The window bounds
 * what a workspace can store (its request rate times one day), since only root keys reach it.
 */
export const IDEMPOTENCY_WINDOW_MS = 86_400_000;

/**
 * The canonical hash of a request for its idempotency record: SHA-256 over the procedure, the
 * caller (a root key id) and the request's protobuf binary form without the idempotency key
 * and without fields this server does not know. The binary form writes fields in field-number
 * order whatever door or JSON key order the request came in, so a repeat of one request hashes
 * the same and any change to what it asks (key, cost, limits, permissions, tags, ...) does not.
 * The caller is in it so that a root key cannot read another one's answer by guessing its key.
 */
export function idempotencyHash<Desc extends DescMessage>(
  procedure: string,
  caller: string,
  schema: Desc,
  request: MessageShape<Desc> & { idempotencyKey?: string },
): string {
  const canonical = { ...request, idempotencyKey: undefined, $unknown: undefined };
  return createHash("sha256")
    .update(`${procedure}\n${caller}\n`)
    .update(toBinary(schema, canonical as MessageShape<Desc>))
    .digest("hex");
}
