import {
  create,
  type DescMessage,
  fromJson,
  type JsonObject,
  type MessageInitShape,
  type MessageShape,
  toJsonString,
} from "@bufbuild/protobuf";
import { VerifyKeyResponseDataSchema } from "../../gen/latchkey/v2/keys_pb.js";
import { IDEMPOTENCY_WINDOW_MS, idempotencyHash } from "../domain/idempotency.js";
import { errors } from "../errors/service-error.js";
import type { Queryable } from "../storage/db.js";
import {
  type IdempotencyPrior,
  idempotencyClaim,
  idempotencyStore,
} from "../storage/queries/idempotency.js";

/** A request's idempotency key in its workspace, with the hash of what the request asks. */
export interface IdempotentRequest {
  workspaceId: string;
  key: string;
  /** `idempotencyHash` of the request. */
  requestHash: string;
}

/**
 * Request `req` of `procedure` with idempotency key `key`, from a root key (`caller`) of a
 * workspace: the key is the workspace's, the hash tells the caller and what it asks.
 */
export function idempotentRequest<Desc extends DescMessage>(
  procedure: string,
  caller: { workspaceId: string; rootKeyId: string },
  schema: Desc,
  req: MessageShape<Desc> & { idempotencyKey?: string },
  key: string,
): IdempotentRequest {
  const requestHash = idempotencyHash(procedure, caller.rootKeyId, schema, req);
  return { workspaceId: caller.workspaceId, key, requestHash };
}

/**
 * Claims the key inside `tx`, the transaction that will also make the request's changes:
 * undefined when this request is the first in the window (run it, then `keepAnswer` in the same
 * transaction), else the first request's answer data, decoded with `schema`. A repeat asking
 * something else is refused with 409; nothing of it runs.
 */
export async function claimOrReplay<Desc extends DescMessage>(
  tx: Queryable,
  r: IdempotentRequest,
  now: number,
  schema: Desc,
): Promise<MessageShape<Desc> | undefined> {
  const prior = await idempotencyClaim(tx, {
    workspaceId: r.workspaceId,
    key: r.key,
    requestHash: r.requestHash,
    now,
    expiredAt: now - IDEMPOTENCY_WINDOW_MS,
  });
  if (prior === undefined) return undefined;
  return replayed(prior, r, schema);
}

/**
 * The first request's answer from its committed record, decoded with `schema`; 409 when the
 * record is of a request asking something else.
 */
export function replayed<Desc extends DescMessage>(
  prior: IdempotencyPrior,
  r: IdempotentRequest,
  schema: Desc,
): MessageShape<Desc> {
  if (prior.requestHash !== r.requestHash) throw errors.idempotencyKeyReused();
  // A committed record always has its answer: the claiming transaction writes it first.
  if (prior.answer === null)
    throw errors.unexpected(new Error("a committed idempotency record has no answer"));
  return fromJson(schema, inCurrentShape(schema, JSON.parse(prior.answer) as JsonObject));
}

/**
 * Answers stored by an earlier release in a shape the current message no longer reads, by
 * message: each rewrites the stored JSON in place. A record lives for the idempotency window
 * (24 hours), so an entry is needed only by the release that changed the shape.
 */
const EARLIER_SHAPES: Readonly<Record<string, (answer: JsonObject) => void>> = {
  // verifyKey's identity reported its credit pool as a Credits object, {remaining}; it is
  // now the balance itself.
  [VerifyKeyResponseDataSchema.typeName]: (answer) => {
    const identity = answer.identity as JsonObject | undefined;
    const credits = identity?.credits;
    if (identity && credits !== null && typeof credits === "object" && !Array.isArray(credits)) {
      identity.credits = (credits as JsonObject).remaining ?? null;
    }
  },
};

function inCurrentShape(schema: DescMessage, answer: JsonObject): JsonObject {
  EARLIER_SHAPES[schema.typeName]?.(answer);
  return answer;
}

/** Stores the answer data of the request that claimed the key, in the claiming transaction. */
export function keepAnswer<Desc extends DescMessage>(
  tx: Queryable,
  r: IdempotentRequest,
  schema: Desc,
  data: MessageInitShape<Desc>,
): Promise<void> {
  return idempotencyStore(tx, r.workspaceId, r.key, answerText(schema, data));
}

/** Answer data as a record keeps it (protobuf JSON, what `replayed` decodes). */
export function answerText<Desc extends DescMessage>(
  schema: Desc,
  data: MessageInitShape<Desc>,
): string {
  return toJsonString(schema, create(schema, data));
}
