// The ceiling of the gRPC door for keys.verifyKey: a bare @grpc/grpc-js server answering
// VerifyKey with a VALID response of the same shape as Latchkey's (one rate limit),
// serialised with the same generated protobuf-es messages, with no checks or storage.
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import * as grpc from "@grpc/grpc-js";
import {
  VerifyKeyCode,
  VerifyKeyRequestSchema,
  VerifyKeyResponseSchema,
} from "../../dist/gen/latchkey/v2/keys_pb.js";

let n = 0;
const server = new grpc.Server();
server.addService(
  {
    verifyKey: {
      path: "/latchkey.v2.KeysService/VerifyKey",
      requestStream: false,
      responseStream: false,
      requestSerialize: (m) => Buffer.from(toBinary(VerifyKeyRequestSchema, m)),
      requestDeserialize: (b) => fromBinary(VerifyKeyRequestSchema, b),
      responseSerialize: (m) => Buffer.from(toBinary(VerifyKeyResponseSchema, m)),
      responseDeserialize: (b) => fromBinary(VerifyKeyResponseSchema, b),
    },
  },
  {
    verifyKey(call, callback) {
      const now = Date.now();
      callback(
        null,
        create(VerifyKeyResponseSchema, {
          meta: { requestId: `req_${(n++).toString(36).padStart(16, "0")}` },
          data: {
            valid: true,
            code: VerifyKeyCode.VALID,
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
    },
  },
);
server.bindAsync(
  `127.0.0.1:${process.env.PORT ?? 0}`,
  grpc.ServerCredentials.createInsecure(),
  (err, port) => {
    if (err) throw err;
    console.log(JSON.stringify({ port }));
  },
);
process.on("SIGTERM", () => server.tryShutdown(() => process.exit(0)));
