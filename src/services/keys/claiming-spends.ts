import type { MessageInitShape } from "@bufbuild/protobuf";
import { VerifyKeyResponseDataSchema } from "../../../gen/latchkey/v2/keys_pb.js";
import type { Clock } from "../../domain/clock.js";
import type { CreditSpender, PooledResult, SpendResult } from "../../storage/credit-spender.js";
import { answerText, type IdempotentRequest } from "../idempotency.js";

type AnswerData = MessageInitShape<typeof VerifyKeyResponseDataSchema>;

/**
 * The credit spends of a verification that claims its idempotency key with its charge: each
 * also gets the answer to store, built from the spend's result. Throws `ClaimLost` when
 * another call holds the key; then nothing was spent.
 */
export interface ClaimingSpending {
  spend(
    keyId: string,
    cost: number,
    holderId: string,
    dataOf: (r: SpendResult) => AnswerData,
  ): Promise<SpendResult>;
  spendPooled(
    identityId: string,
    keyId: string,
    cost: number,
    dataOf: (r: PooledResult) => AnswerData,
  ): Promise<PooledResult>;
}

/** Another call holds the idempotency key: its answer is the one to give. */
export class ClaimLost extends Error {
  override name = "ClaimLost";
  constructor() {
    super("the idempotency key was claimed by another call");
  }
}

/**
 * `ClaimingSpending` through the grouped claimed spends of `CreditSpender`, for one request;
 * `reached` tells whether the verification got to its spend.
 */
export class ClaimingSpends implements ClaimingSpending {
  reached = false;

  constructor(
    private readonly credits: CreditSpender,
    private readonly request: IdempotentRequest,
    private readonly clock: Clock,
  ) {}

  async spend(
    keyId: string,
    cost: number,
    holderId: string,
    dataOf: (r: SpendResult) => AnswerData,
  ): Promise<SpendResult> {
    this.reached = true;
    const answerOf = (r: SpendResult) => stored(dataOf(r));
    return won(
      await this.credits.spendOnce(holderId, { keyId, cost, claim: this.claim(), answerOf }),
    );
  }

  async spendPooled(
    identityId: string,
    keyId: string,
    cost: number,
    dataOf: (r: PooledResult) => AnswerData,
  ): Promise<PooledResult> {
    this.reached = true;
    const answerOf = (r: PooledResult) => stored(dataOf(r));
    const claim = this.claim();
    return won(await this.credits.spendPooledOnce(identityId, { keyId, cost, claim, answerOf }));
  }

  private claim() {
    return { ...this.request, now: this.clock.now() };
  }
}

function won<R>(r: R | undefined): R {
  if (r === undefined) throw new ClaimLost();
  return r;
}

/** The answer data as a record keeps it. */
function stored(data: AnswerData): string {
  return answerText(VerifyKeyResponseDataSchema, data);
}
