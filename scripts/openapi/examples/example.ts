/**
 * One procedure's example in the API reference: a request body and the answer to it.
 *
 * The request is one a fresh instance answers with 200 when sent with the first root key,
 * once the objects it names exist (the ids below are those the other examples' answers
 * hand out; a reader substitutes their own). `response` is the answer's `data` and, for a
 * list, its `pagination`; the generator adds `meta`. Every example is checked against the
 * request and response schemas it documents (test/unit/openapi-document.test.ts) and sent to
 * a real server in the order of a first session (test/server/openapi.test.ts).
 */
export interface Example {
  /** The JSON body, as `Try it out` on /docs fills it in. */
  request: unknown;
  /** The 200 answer's `data`, and `pagination` for a list. */
  response: { data: unknown; pagination?: { cursor?: string; hasMore: boolean } };
}

/** The examples of one namespace, by procedure name (`keys.createKey`). */
export type Examples = Readonly<Record<string, Example>>;

/** The ids the examples share, so that one answer's id is the next request's. */
export const IDS = {
  requestId: "req_8nM1bV3cX5zL7kJ9",
  apiId: "api_7fQk2LmX9pRt4WvZ",
  keyId: "key_3Jd8sKq1VbN6xYtE",
  rerolledKeyId: "key_5Gh2nW8cPq4ZrT1m",
  migratedKeyId: "key_1Xc7vB3nM9qW5eRt",
  identityId: "id_9aB2cD4eF6gH8jK1",
  permissionId: "perm_5tR7yU9iO1pA3sD5",
  roleId: "role_2wE4rT6yU8iO0pQ1",
  overrideId: "rlor_6hJ8kL0zX2cV4bN6",
  key: "wx_3ZtKq8fV2mLpR9xBn4cJ7d7Xymh7",
  rerolledKey: "wx_8HsW2kPz5QnLt3VcX9mRbf3i9ZQC",
  reservationId: "res_4Nq8Lm2Xc6Vb0Zt3",
  endpointId: "whep_7Kp2Xv9QmR4tLw1Z",
  deliveryId: "msg_3Fh8Jq2Lz6Wc9Nb4",
  webhookSecret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
} as const;
