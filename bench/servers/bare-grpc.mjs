// The ceiling of the gRPC door: a bare @grpc/grpc-js server answering GetApi with a fixed
// response, serialised with the same generated protobuf-es messages Latchkey uses.
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import * as grpc from "@grpc/grpc-js";
import { GetApiRequestSchema, GetApiResponseSchema } from "../../dist/gen/latchkey/v2/apis_pb.js";

let n = 0;
const server = new grpc.Server();
server.addService(
  {
    getApi: {
      path: "/latchkey.v2.ApisService/GetApi",
      requestStream: false,
      responseStream: false,
      requestSerialize: (m) => Buffer.from(toBinary(GetApiRequestSchema, m)),
      requestDeserialize: (b) => fromBinary(GetApiRequestSchema, b),
      responseSerialize: (m) => Buffer.from(toBinary(GetApiResponseSchema, m)),
      responseDeserialize: (b) => fromBinary(GetApiResponseSchema, b),
    },
  },
  {
    getApi(call, callback) {
      callback(
        null,
        create(GetApiResponseSchema, {
          meta: { requestId: `req_${(n++).toString(36).padStart(16, "0")}` },
          data: { id: call.request.apiId, name: "bench api" },
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
