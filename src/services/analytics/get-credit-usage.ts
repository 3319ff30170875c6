import type { JsonObject, MessageInitShape } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import {
  CreditUsageGranularity,
  type GetCreditUsageRequest,
  type GetCreditUsageResponseSchema,
} from "../../../gen/latchkey/v2/analytics_pb.js";
import {
  bucketCount,
  bucketStarts,
  MAX_STATEMENT_BUCKETS,
  type StatementGranularity,
} from "../../domain/credit-ledger.js";
import { errors } from "../../errors/service-error.js";
import { creditLedgerBuckets } from "../../storage/queries/credit-ledger.js";
import {
  type CountedSubject,
  verificationCountsByBucket,
} from "../../storage/queries/verification-counts.js";
import { authorize } from "../auth.js";
import { principalOf } from "../call.js";
import type { Deps } from "../deps.js";
import { findIdentity } from "../identities/find-identity.js";
import { findKey } from "../keys/find-key.js";

const GRANULARITY: Readonly<Record<number, StatementGranularity>> = {
  [CreditUsageGranularity.HOUR]: "hour",
  [CreditUsageGranularity.DAY]: "day",
  [CreditUsageGranularity.MONTH]: "month",
};

/**
 * The credit statement of a key or an identity's pool: for every UTC bucket of [start, end),
 * the ledger's sums (exact: entries are written with the balance moves they record) and the
 * verifications by outcome (from the analytics events, stored about every second). A key's
 * statement needs read_analytics on the key's API, an identity's (its keys may be in any API)
 * the workspace-wide grant; the key or identity is found first (404 before 403, as getKey).
 */
export async function getCreditUsage(
  deps: Deps,
  req: GetCreditUsageRequest,
  ctx: HandlerContext,
): Promise<MessageInitShape<typeof GetCreditUsageResponseSchema>> {
  const start = Number(req.start);
  const end = Number(req.end);
  const g = GRANULARITY[req.granularity];
  if (g === undefined) throw errors.badField("/granularity", "must be hour, day or month");
  if (end <= start) throw errors.badField("/end", "must be after start");
  if (bucketCount(g, start, end) > MAX_STATEMENT_BUCKETS) {
    throw errors.badField(
      "/end",
      `makes more than ${MAX_STATEMENT_BUCKETS} ${g} buckets; shorten the range or widen the granularity`,
    );
  }
  const { workspaceId } = principalOf(ctx);
  const subject = await subjectOf(deps, ctx, req, workspaceId);
  const subjectId = "keyId" in subject ? subject.keyId : subject.identityId;
  const [moves, counts] = await Promise.all([
    creditLedgerBuckets(deps.db, workspaceId, subjectId, g, start, end),
    verificationCountsByBucket(deps.db, workspaceId, subject, g, start, end),
  ]);
  const byTime = new Map(moves.map((m) => [m.time, m]));
  const outcomes = new Map<number, JsonObject>();
  for (const c of counts) {
    const o = outcomes.get(c.time) ?? {};
    o[c.outcome] = c.count;
    outcomes.set(c.time, o);
  }
  const data = bucketStarts(g, start, end).map((time) => {
    const m = byTime.get(time);
    return {
      time: BigInt(time),
      spent: BigInt(m?.spent ?? 0),
      refilled: BigInt(m?.refilled ?? 0),
      adjusted: BigInt(m?.adjusted ?? 0),
      verifications: outcomes.get(time) ?? {},
    };
  });
  return { data };
}

/** The key or identity the request names, in the caller's workspace, once authorized. */
async function subjectOf(
  deps: Deps,
  ctx: HandlerContext,
  req: GetCreditUsageRequest,
  workspaceId: string,
): Promise<CountedSubject> {
  if (req.keyId !== undefined) {
    const key = await findKey(deps.db, workspaceId, req.keyId);
    authorize(ctx, { apiId: key.apiId });
    return { keyId: key.id };
  }
  const identity =
    req.identityId !== undefined
      ? await findIdentity(deps.db, workspaceId, { identity: req.identityId })
      : await findIdentity(deps.db, workspaceId, { externalId: req.externalId as string });
  // identityFind also matches an externalId by `identity`; identityId names an id only.
  if (req.identityId !== undefined && identity.id !== req.identityId) {
    throw errors.identityNotFound();
  }
  // An identity's keys may be in any API: its statement needs the workspace-wide grant.
  authorize(ctx, { apiId: "*" });
  return { identityId: identity.id };
}
