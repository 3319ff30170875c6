// The doors against their ceilings, cached key with one auto-applied rate limit, PGlite: the
// /v2 door against bare node:http (autocannon and h2load --h1), the gRPC port against bare
// grpc-js (h2load). Below the target (or with BENCH_PROFILE=1): a CPU profile, and the /v2
// door again with verification events dropped and on PostgreSQL.
import { create, toBinary } from "@bufbuild/protobuf";
import type * as KeysPb from "../../../gen/latchkey/v2/keys_pb.ts";
import { type Answers, answersBetween, grpcFrame, metricsOf } from "../../lib/api.ts";
import { withDatabase } from "../../lib/database.ts";
import { fromDist } from "../../lib/dist.ts";
import { grpcLoad, type JsonLoads, jsonLoads, type Measured } from "../../lib/doors.ts";
import { autocannonLoad, type H2loadResult } from "../../lib/load/closed-loop.ts";
import { type ProfileSummary, printProfile, profileWhile } from "../../lib/profile.ts";
import { type LatchkeyOptions, withBare, withLatchkey } from "../../lib/server.ts";
import { ratio } from "../../lib/stats.ts";
import { BARE_KEY, hotKey, VERIFY_PATH, type VerifyContext } from "./common.ts";

export const DOOR_TARGET = 0.5;

export interface DoorResult {
  bareHttp: JsonLoads;
  jsonDoor: JsonLoads & { answers: Answers };
  grpcJs: Measured<H2loadResult>;
  bareGrpc: Measured<H2loadResult>;
  ratios: {
    jsonDoorOfBareHttp: number | null;
    jsonDoorOfBareHttpH2load: number | null;
    grpcJsOfBareGrpc: number | null;
  };
  /** Below the target: what the /v2 door does with events dropped and on PostgreSQL. */
  diagnosis?: {
    eventsDropped: JsonLoads;
    postgresql: JsonLoads;
    profile: ProfileSummary;
  };
}

async function keysPb() {
  return fromDist<typeof KeysPb>("gen/latchkey/v2/keys_pb.js");
}

async function frameOf(key: string): Promise<Buffer> {
  const pb = await keysPb();
  return grpcFrame(toBinary(pb.VerifyKeyRequestSchema, create(pb.VerifyKeyRequestSchema, { key })));
}

/** The /v2 door alone on a fresh Latchkey (`options`), under both closed-loop loads. */
async function jsonDoorOnly(context: VerifyContext, what: string, options: LatchkeyOptions) {
  return withLatchkey(options, async (lk) => {
    const { key } = await hotKey(context, lk, what);
    const loads = await jsonLoads(context, what, {
      url: `${lk.base}/v2/keys.verifyKey`,
      body: JSON.stringify({ key }),
    });
    return loads;
  });
}

/** A CPU profile of the /v2 door under autocannon, taken during the measured seconds only. */
async function profileJsonDoor(context: VerifyContext): Promise<ProfileSummary> {
  return withLatchkey({ inspect: true }, async (lk) => {
    const { key } = await hotKey(context, lk, "profile");
    const load = () =>
      autocannonLoad({
        url: `${lk.base}/v2/keys.verifyKey`,
        body: JSON.stringify({ key }),
        seconds: context.settings.seconds,
        warmupSeconds: context.settings.warmupSeconds,
      });
    await load();
    const { profile } = await profileWhile(lk.inspector, load, 200);
    printProfile("latchkey /v2 door", profile);
    return profile;
  });
}

export async function doorPart(context: VerifyContext): Promise<DoorResult> {
  const bareHttp = await withBare("http", "verify", (bare) =>
    jsonLoads(context, "bare node:http", {
      url: bare.url,
      body: JSON.stringify({ key: BARE_KEY }),
    }),
  );
  let frame: Buffer = Buffer.alloc(0);
  const latchkey = await withLatchkey({ grpc: true }, async (lk) => {
    const { key } = await hotKey(context, lk, "door");
    frame = await frameOf(key);
    const before = await metricsOf(lk.admin);
    const loads = await jsonLoads(context, "latchkey /v2 door", {
      url: `${lk.base}/v2/keys.verifyKey`,
      body: JSON.stringify({ key }),
    });
    const grpcJs = await grpcLoad(context, "latchkey gRPC port", {
      url: `http://127.0.0.1:${lk.grpcPort}${VERIFY_PATH}`,
      frame,
    });
    const answers = answersBetween("door", before, await metricsOf(lk.admin), context.check);
    return { jsonDoor: { ...loads, answers }, grpcJs };
  });
  const bareGrpc = await withBare("grpc", "verify", (bare) =>
    grpcLoad(context, "bare grpc-js", {
      url: `http://127.0.0.1:${bare.port}${VERIFY_PATH}`,
      frame,
    }),
  );
  const ratios = {
    jsonDoorOfBareHttp: ratio(latchkey.jsonDoor.autocannon.rps, bareHttp.autocannon.rps),
    jsonDoorOfBareHttpH2load: ratio(latchkey.jsonDoor.h2load.rps, bareHttp.h2load.rps),
    grpcJsOfBareGrpc: ratio(latchkey.grpcJs.rps, bareGrpc.rps),
  };
  console.log(`ratios (target >= ${DOOR_TARGET})`, ratios);
  const out: DoorResult = { bareHttp, bareGrpc, ...latchkey, ratios };
  const low = Object.values(ratios).some((r) => (r ?? 0) < DOOR_TARGET);
  if ((low && !context.quick) || context.settings.profile) {
    out.diagnosis = {
      // The events are written by PGlite on the server's own thread: the door without them,
      // and on PostgreSQL, where another process writes them.
      eventsDropped: await jsonDoorOnly(context, "/v2 door, events dropped", {
        env: { EVENT_BUFFER_SIZE: "1" },
      }),
      postgresql: await withDatabase("verify", (db) =>
        jsonDoorOnly(context, "/v2 door on PostgreSQL", { databaseUrl: db.url }),
      ),
      profile: await profileJsonDoor(context),
    };
  }
  return out;
}
