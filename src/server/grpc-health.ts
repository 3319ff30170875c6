import { BinaryReader, BinaryWriter, WireType } from "@bufbuild/protobuf/wire";
import { Code } from "@connectrpc/connect";
import type { Readiness, ReadinessReport } from "../health/readiness.js";
import { type GrpcRoute, plainUnary, type StreamCall } from "./grpc-routes.js";
import { OK_TRAILERS, statusTrailers } from "./grpc-wire.js";

/**
 * Watch streams open at once on one gRPC port; beyond, a Watch is refused with
 * RESOURCE_EXHAUSTED. A watcher costs a listener and a stream, and a proxy or a balancer
 * watches once per connection, so this is far above honest use and far below harm.
 */
export const MAX_HEALTH_WATCHES = 1_000;

/** grpc.health.v1.HealthCheckResponse.ServingStatus. */
const SERVING_STATUS = { UNKNOWN: 0, SERVING: 1, NOT_SERVING: 2, SERVICE_UNKNOWN: 3 } as const;
type ServingStatus = keyof typeof SERVING_STATUS;

/** The health service of a port, and what its drain needs. */
export interface GrpcHealth {
  routes: [string, GrpcRoute][];
  /** Ends every Watch stream (after the NOT_SERVING that a stop has sent) and refuses new ones. */
  close(): void;
}

/** HealthCheckRequest.service (field 1); a request that does not decode asks for "". */
function serviceOf(bytes: Uint8Array): string {
  const r = new BinaryReader(bytes);
  let service = "";
  while (r.pos < r.len) {
    const [no, type] = r.tag();
    if (no === 1 && type === WireType.LengthDelimited) service = r.string();
    else r.skip(type, no);
  }
  return service;
}

/** HealthCheckResponse { status = 1 }. */
function checkResponse(status: ServingStatus): Uint8Array {
  return new BinaryWriter()
    .uint32((1 << 3) | WireType.Varint)
    .int32(SERVING_STATUS[status])
    .finish();
}

/** HealthListResponse { map<string, HealthCheckResponse> statuses = 1 }. */
function listResponse(statuses: Map<string, ServingStatus>): Uint8Array {
  const w = new BinaryWriter();
  for (const [name, status] of statuses) {
    w.tag(1, WireType.LengthDelimited).fork();
    w.tag(1, WireType.LengthDelimited).string(name);
    w.tag(2, WireType.LengthDelimited).bytes(checkResponse(status));
    w.join();
  }
  return w.finish();
}

const PATH = "/grpc.health.v1.Health";

/**
 * `grpc.health.v1.Health` (Check, Watch and List) for the gRPC port: the overall status
 * (service `""`) and each of `services` (their full names, `latchkey.v2.KeysService`) are
 * SERVING while the server is ready and NOT_SERVING otherwise. A Check reads the readiness
 * report first (cached, bounded in time, see Readiness); a Watch is told the status at once and
 * each change after, readiness is polled while anyone watches, and NOT_SERVING is sent at once
 * when a stop begins. An unknown name is NOT_FOUND to Check and SERVICE_UNKNOWN to Watch, and
 * is kept nowhere: a caller cannot grow the server's state by asking name after name.
 */
export function healthRoutes(
  readiness: Readiness,
  services: readonly string[],
  maxWatches = MAX_HEALTH_WATCHES,
): GrpcHealth {
  const names = new Set(["", ...services]);
  let status: ServingStatus = "NOT_SERVING";
  /** Every open Watch (what the cap counts), each with the name it watches. */
  const watches = new Map<StreamCall, string>();
  /** The open Watches of served names: readiness is kept fresh while there are any. */
  let polled = 0;
  let stopPolling: (() => void) | undefined;
  let closed = false;

  const apply = (report: ReadinessReport) => {
    const next: ServingStatus = report.ready ? "SERVING" : "NOT_SERVING";
    if (next === status) return;
    status = next;
    const told = checkResponse(status);
    for (const [call, name] of watches) if (names.has(name)) call.write(told);
  };
  apply(readiness.latest() ?? { ready: false, failing: [] });
  readiness.onChange(apply);

  const unwatch = (call: StreamCall) => {
    const name = watches.get(call);
    if (name === undefined) return;
    watches.delete(call);
    if (names.has(name) && --polled === 0) {
      stopPolling?.();
      stopPolling = undefined;
    }
  };

  const check = plainUnary(async (bytes) => {
    const service = serviceOf(bytes);
    apply(await readiness.report());
    if (!names.has(service)) {
      return {
        trailer: statusTrailers(Code.NotFound, `Health status unknown for service ${service}`),
      };
    }
    return { message: checkResponse(status), trailer: OK_TRAILERS };
  });

  const list = plainUnary(async () => {
    apply(await readiness.report());
    const statuses = new Map<string, ServingStatus>();
    for (const name of names) statuses.set(name, status);
    return { message: listResponse(statuses), trailer: OK_TRAILERS };
  });

  const watch: GrpcRoute = {
    kind: "stream",
    open(call) {
      let asked = false;
      return {
        message(bytes) {
          // A server-streaming call: the first message is the request, any other is ignored.
          if (asked) return;
          asked = true;
          if (closed || watches.size >= maxWatches) {
            call.end(
              closed
                ? statusTrailers(Code.Unavailable, "the server is stopping")
                : statusTrailers(
                    Code.ResourceExhausted,
                    `this port holds ${maxWatches} health watches already`,
                  ),
            );
            return;
          }
          const service = serviceOf(bytes);
          watches.set(call, service);
          if (!names.has(service)) {
            call.write(checkResponse("SERVICE_UNKNOWN"));
            return;
          }
          polled++;
          stopPolling ??= readiness.keepFresh();
          call.write(checkResponse(status));
        },
        end() {
          if (!asked)
            call.end(
              statusTrailers(Code.InvalidArgument, "a Watch asks with one HealthCheckRequest"),
            );
        },
        cancel: () => unwatch(call),
      };
    },
  };

  return {
    routes: [
      [`${PATH}/Check`, check],
      [`${PATH}/Watch`, watch],
      [`${PATH}/List`, list],
    ],
    close() {
      closed = true;
      for (const call of [...watches.keys()]) {
        unwatch(call);
        call.end(statusTrailers(Code.Unavailable, "the server is stopping"));
      }
    },
  };
}
