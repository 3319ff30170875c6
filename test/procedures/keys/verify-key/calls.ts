import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { ConnectError } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { expect } from "vitest";
import { ErrorDetailSchema } from "../../../../gen/latchkey/v2/common_pb.js";
import {
  VerifyKeyCode,
  type VerifyKeyRequestSchema,
  type VerifyKeyResponseData,
  VerifyKeyResponseDataSchema,
} from "../../../../gen/latchkey/v2/keys_pb.js";
import type { TestServer } from "../../../harness/server.js";
import { type Api, type TypedAuth, typedApi } from "../../../harness/typed.js";

// How the keys.verifyKey tests call the procedure and read its answer.

export type VerifyRequest = MessageInitShape<typeof VerifyKeyRequestSchema>;

/** One hour in milliseconds, the window of most limits here. */
export const HOUR = 3_600_000;

/** The whole answer for NOT_FOUND: only `valid` and `code` are set. */
export const NOT_FOUND_ANSWER = create(VerifyKeyResponseDataSchema, {
  valid: false,
  code: VerifyKeyCode.NOT_FOUND,
});

/** keys.verifyKey through `api`; the answer's data (the test fails when there is none). */
export async function verifyWith(api: Api, req: VerifyRequest): Promise<VerifyKeyResponseData> {
  const res = await api.keys.verifyKey(req);
  if (!res.data) expect.fail("keys.verifyKey answered without data");
  return res.data;
}

/** keys.verifyKey on a test server, without a root key unless one is given. */
export function verifierOf(s: TestServer) {
  return (req: VerifyRequest, auth: TypedAuth = null) => verifyWith(s.as(auth), req);
}

/** The outcome's name, for lists of outcomes that read well when a test fails. */
export const codeName = (data: VerifyKeyResponseData) => VerifyKeyCode[data.code];

/**
 * The HTTP status a call ends with: 200 when it succeeds, else its error detail's status
 * (-1 when the call failed without one, as when the connection is cut).
 */
export function statusOf(call: Promise<unknown>): Promise<number> {
  return call.then(
    () => 200,
    (err: unknown) => ConnectError.from(err).findDetails(ErrorDetailSchema)[0]?.status ?? -1,
  );
}

/** Typed clients of a server we only know by URL (another process), over Connect. */
export function typedApiAt(baseUrl: string, auth: TypedAuth): Api {
  return typedApi(createConnectTransport({ baseUrl, httpVersion: "1.1" }), auth);
}
