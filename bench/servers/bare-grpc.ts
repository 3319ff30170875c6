// The ceiling of the gRPC port: a bare @grpc/grpc-js server answering with a response of the
// same shape as Latchkey's, serialised with the same generated protobuf-es messages (from
// dist/), with no checks or storage. BARE_SHAPE: `get-api` (ApisService/GetApi) or `verify`
// (KeysService/VerifyKey, VALID with one rate limit). Prints {"port":N,"eventLoopPort":M} once
// bound: M is a side HTTP port answering the event-loop delay since its last read
// (bench/lib/eventloop.ts), like Latchkey's /metrics.
import {
  create,
  type DescMessage,
  fromBinary,
  type MessageShape,
  toBinary,
} from "@bufbuild/protobuf";
import * as grpc from "@grpc/grpc-js";
import type * as ApisPb from "../../gen/latchkey/v2/apis_pb.ts";
import type * as KeysPb from "../../gen/latchkey/v2/keys_pb.ts";
import { fromDist } from "../lib/dist.ts";
import { serveEventLoopDelay } from "../lib/eventloop.ts";

const apis = await fromDist<typeof ApisPb>("gen/latchkey/v2/apis_pb.js");
const keys = await fromDist<typeof KeysPb>("gen/latchkey/v2/keys_pb.js");
let n = 0;
const requestId = () => `req_${(n++).toString(36).padStart(16, "0")}`;

function method<I extends DescMessage, O extends DescMessage>(path: string, input: I, output: O) {
  return {
    path,
    requestStream: false,
    responseStream: false,
    requestSerialize: (m: MessageShape<I>) => Buffer.from(toBinary(input, m)),
    requestDeserialize: (b: Buffer) => fromBinary(input, b),
    responseSerialize: (m: MessageShape<O>) => Buffer.from(toBinary(output, m)),
    responseDeserialize: (b: Buffer) => fromBinary(output, b),
  };
}

function verifyKey(
  call: grpc.ServerUnaryCall<KeysPb.VerifyKeyRequest, KeysPb.VerifyKeyResponse>,
  callback: grpc.sendUnaryData<KeysPb.VerifyKeyResponse>,
) {
  const now = Date.now();
  callback(
    null,
    create(keys.VerifyKeyResponseSchema, {
      meta: { requestId: requestId() },
      data: {
        valid: true,
        code: keys.VerifyKeyCode.VALID,
        keyId: `key_${call.request.key.slice(0, 16).padStart(16, "0")}`,
        enabled: true,
        ratelimits: [
          {
            id: "rl_0000000000000000",
            name: "requests",
            limit: 1_000_000_000n,
            duration: 60_000n,
            remaining: BigInt(1_000_000_000 - (n % 1_000_000_000)),
            reset: BigInt(now - (now % 60_000) + 60_000),
            exceeded: false,
            autoApply: true,
          },
        ],
      },
    }),
  );
}

function getApi(
  call: grpc.ServerUnaryCall<ApisPb.GetApiRequest, ApisPb.GetApiResponse>,
  callback: grpc.sendUnaryData<ApisPb.GetApiResponse>,
) {
  callback(
    null,
    create(apis.GetApiResponseSchema, {
      meta: { requestId: requestId() },
      data: { id: call.request.apiId, name: "bench api" },
    }),
  );
}

const server = new grpc.Server();
if (process.env.BARE_SHAPE === "verify") {
  const path = "/latchkey.v2.KeysService/VerifyKey";
  const definition = method(path, keys.VerifyKeyRequestSchema, keys.VerifyKeyResponseSchema);
  server.addService({ verifyKey: definition }, { verifyKey });
} else {
  const path = "/latchkey.v2.ApisService/GetApi";
  server.addService(
    { getApi: method(path, apis.GetApiRequestSchema, apis.GetApiResponseSchema) },
    { getApi },
  );
}
const eventLoopPort = await serveEventLoopDelay();
server.bindAsync(
  `127.0.0.1:${process.env.PORT ?? 0}`,
  grpc.ServerCredentials.createInsecure(),
  (err, port) => {
    if (err) throw err;
    console.log(JSON.stringify({ port, eventLoopPort }));
  },
);
process.on("SIGTERM", () => server.tryShutdown(() => process.exit(0)));
