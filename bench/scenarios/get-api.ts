// apis.getApi, a root-key read of one row (cached), on every door against its ceiling: the /v2
// JSON door (autocannon and h2load --h1, 50 connections) against a bare node:http server, the
// gRPC port (GRPC_PORT) and Connect's gRPC on the main port (h2load, 10 x 10 streams)
// against a bare grpc-js server. Latchkey on PGlite; all on this machine's cores together.
import { create, toBinary } from "@bufbuild/protobuf";
import type * as ApisPb from "../../gen/latchkey/v2/apis_pb.ts";
import { authorization, call, grpcFrame } from "../lib/api.ts";
import { fromDist } from "../lib/dist.ts";
import { grpcLoad, type JsonLoads, jsonLoads, type Measured } from "../lib/doors.ts";
import type { H2loadResult } from "../lib/load/closed-loop.ts";
import { autocannonLoad } from "../lib/load/closed-loop.ts";
import { num, table, verdict } from "../lib/markdown.ts";
import { type ProfileSummary, printProfile, profileWhile } from "../lib/profile.ts";
import { defineScenario, noArgs, setting } from "../lib/scenario.ts";
import { withBare, withLatchkey } from "../lib/server.ts";
import { ratio } from "../lib/stats.ts";

export interface GetApiSettings {
  seconds: number;
  warmupSeconds: number;
  /** Also profile Latchkey under the /v2 load (BENCH_PROFILE=1). */
  profile: boolean;
}

export interface GetApiResult {
  bareHttp: JsonLoads;
  jsonDoor: JsonLoads;
  grpcJs: Measured<H2loadResult>;
  connectGrpc: Measured<H2loadResult>;
  bareGrpc: Measured<H2loadResult>;
  ratios: {
    jsonDoorOfBareHttp: number | null;
    jsonDoorOfBareHttpH2load: number | null;
    grpcJsOfBareGrpc: number | null;
    connectGrpcOfBareGrpc: number | null;
  };
  profile?: ProfileSummary;
}

const TARGET = 0.5;
const GET_API = "/latchkey.v2.ApisService/GetApi";

export default defineScenario<GetApiSettings, GetApiResult>({
  name: "get-api",
  description: "apis.getApi on the /v2 door and both gRPC doors against bare node:http and grpc-js",
  settings: ({ quick, args }) => {
    noArgs("get-api", args);
    return {
      seconds: setting("BENCH_SECONDS", 10, 2, quick),
      warmupSeconds: quick ? 1 : 2,
      profile: process.env.BENCH_PROFILE === "1",
    };
  },
  async run(context) {
    const apis = await fromDist<typeof ApisPb>("gen/latchkey/v2/apis_pb.js");
    const bareHttp = await withBare("http", "get-api", (bare) =>
      jsonLoads(context, "bare node:http", { url: bare.url, body: '{"apiId":"api_bench"}' }),
    );
    let frame: Buffer = Buffer.alloc(0);
    const latchkey = await withLatchkey(
      { grpc: true, inspect: context.settings.profile },
      async (lk) => {
        const { apiId } = await call(lk.base, "apis.createApi", { name: "bench api" });
        frame = grpcFrame(
          toBinary(apis.GetApiRequestSchema, create(apis.GetApiRequestSchema, { apiId })),
        );
        const url = `${lk.base}/v2/apis.getApi`;
        const body = JSON.stringify({ apiId });
        const headers = authorization();
        const jsonDoor = await jsonLoads(context, "latchkey /v2 door", { url, body, headers });
        const connectGrpc = await grpcLoad(context, "latchkey Connect gRPC", {
          url: `${lk.base}${GET_API}`,
          frame,
          headers,
        });
        const grpcJs = await grpcLoad(context, "latchkey gRPC port", {
          url: `http://127.0.0.1:${lk.grpcPort}${GET_API}`,
          frame,
          headers,
        });
        if (!context.settings.profile) return { jsonDoor, connectGrpc, grpcJs };
        const { seconds, warmupSeconds } = context.settings;
        const { profile } = await profileWhile(lk.inspector, () =>
          autocannonLoad({ url, body, headers, seconds, warmupSeconds }),
        );
        printProfile("latchkey under the /v2 load", profile);
        return { jsonDoor, connectGrpc, grpcJs, profile };
      },
    );
    const bareGrpc = await withBare("grpc", "get-api", (bare) =>
      grpcLoad(context, "bare grpc-js", { url: `http://127.0.0.1:${bare.port}${GET_API}`, frame }),
    );
    const ratios = {
      jsonDoorOfBareHttp: ratio(latchkey.jsonDoor.autocannon.rps, bareHttp.autocannon.rps),
      jsonDoorOfBareHttpH2load: ratio(latchkey.jsonDoor.h2load.rps, bareHttp.h2load.rps),
      grpcJsOfBareGrpc: ratio(latchkey.grpcJs.rps, bareGrpc.rps),
      connectGrpcOfBareGrpc: ratio(latchkey.connectGrpc.rps, bareGrpc.rps),
    };
    console.log("ratios", ratios);
    return { bareHttp, bareGrpc, ...latchkey, ratios };
  },
  render(r) {
    const rows = [
      ["bare node:http", r.bareHttp.autocannon.rps, r.bareHttp.h2load.rps, null, ""],
      [
        "Latchkey /v2 door",
        r.jsonDoor.autocannon.rps,
        r.jsonDoor.h2load.rps,
        `${num(r.ratios.jsonDoorOfBareHttp)} / ${num(r.ratios.jsonDoorOfBareHttpH2load)}`,
        verdict(
          (r.ratios.jsonDoorOfBareHttp ?? 0) >= TARGET &&
            (r.ratios.jsonDoorOfBareHttpH2load ?? 0) >= TARGET,
        ),
      ],
      ["bare grpc-js", null, r.bareGrpc.rps, null, ""],
      [
        "Latchkey gRPC port (GRPC_PORT)",
        null,
        r.grpcJs.rps,
        num(r.ratios.grpcJsOfBareGrpc),
        verdict((r.ratios.grpcJsOfBareGrpc ?? 0) >= TARGET),
      ],
      [
        "Latchkey Connect gRPC (main port)",
        null,
        r.connectGrpc.rps,
        num(r.ratios.connectGrpcOfBareGrpc),
        "(no target)",
      ],
    ];
    return table(
      ["server", "autocannon req/s:", "h2load req/s:", "of bare:", `target >= ${TARGET}`],
      rows,
    );
  },
});
