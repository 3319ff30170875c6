import * as grpc from "@grpc/grpc-js";
import { HealthImplementation, type ServingStatus } from "grpc-health-check";
import type { Readiness, ReadinessReport } from "../health/readiness.js";

/**
 * Watch streams open at once on one gRPC port; beyond, a Watch is refused with
 * RESOURCE_EXHAUSTED. A watcher costs a listener and a stream, and a proxy or a balancer
 * watches once per connection, so this is far above honest use and far below harm.
 */
export const MAX_HEALTH_WATCHES = 1_000;

/** The gRPC health service of a port, and what its drain needs. */
export interface GrpcHealth {
  /** Ends every Watch stream (after the NOT_SERVING that a stop has sent) and refuses new ones. */
  close(): void;
}

type Handlers = Record<string, (...args: never[]) => void>;
type WatchCall = grpc.ServerWritableStream<unknown, unknown>;

/**
 * Serves `grpc.health.v1.Health` (Check, Watch and List, from the grpc-node project's
 * grpc-health-check package) on `server`: the overall status (service `""`) and each of
 * `services` (their full names, `latchkey.v2.KeysService`) are SERVING while the server is
 * ready and NOT_SERVING otherwise. A Check reads the readiness report first (cached, bounded
 * in time, see Readiness); a Watch is told each change, polled while anyone watches, and
 * NOT_SERVING at once when a stop begins. An unknown name is NOT_FOUND to Check and
 * SERVICE_UNKNOWN to Watch.
 */
export function addHealthService(
  server: grpc.Server,
  readiness: Readiness,
  services: readonly string[],
  maxWatches = MAX_HEALTH_WATCHES,
): GrpcHealth {
  const names = ["", ...services];
  const health = new HealthImplementation();
  let status: ServingStatus | undefined;
  const apply = (report: ReadinessReport) => {
    const next: ServingStatus = report.ready ? "SERVING" : "NOT_SERVING";
    if (next === status) return;
    status = next;
    for (const name of names) health.setStatus(name, next);
  };
  apply(readiness.latest() ?? { ready: false, failing: [] });
  readiness.onChange(apply);

  /** Every open Watch (what the cap counts). */
  const watches = new Set<WatchCall>();
  /** The open Watches of served names: readiness is kept fresh while there are any. */
  const polled = new Set<WatchCall>();
  let closed = false;
  let stopPolling: (() => void) | undefined;
  const unwatch = (call: WatchCall) => {
    watches.delete(call);
    if (polled.delete(call) && polled.size === 0) {
      stopPolling?.();
      stopPolling = undefined;
    }
  };

  // The package adds its handlers to whatever it is given: wrapping them here keeps its
  // answers and adds the bounds and the readiness that it does not know about.
  health.addToServer({
    addService(definition, handlers) {
      // grpc-js finds each handler under the method's name or its original (lower camel) one.
      const { check: Check, watch: Watch, ...rest } = handlers as Handlers;
      if (!Check || !Watch) throw new Error("grpc-health-check served no check or watch");
      server.addService(definition as grpc.ServiceDefinition, {
        ...rest,
        check(call: grpc.ServerUnaryCall<unknown, unknown>, callback: grpc.sendUnaryData<unknown>) {
          void readiness.report().then((report) => {
            apply(report);
            (Check as (c: typeof call, cb: typeof callback) => void)(call, callback);
          });
        },
        watch(call: WatchCall) {
          if (closed || watches.size >= maxWatches) {
            call.emit("error", {
              code: closed ? grpc.status.UNAVAILABLE : grpc.status.RESOURCE_EXHAUSTED,
              details: closed
                ? "the server is stopping"
                : `this port holds ${maxWatches} health watches already`,
            });
            return;
          }
          watches.add(call);
          call.once("cancelled", () => unwatch(call));
          call.once("finish", () => unwatch(call));
          const service = (call.request as { service?: unknown }).service;
          if (typeof service !== "string" || !names.includes(service)) {
            // The services served never change, so an unknown name stays unknown. The package
            // would keep an entry for every name ever watched, which a caller could grow
            // without end by watching name after name.
            call.write({ status: "SERVICE_UNKNOWN" });
            return;
          }
          polled.add(call);
          stopPolling ??= readiness.keepFresh();
          (Watch as (c: WatchCall) => void)(call);
        },
      });
    },
  });

  return {
    close() {
      closed = true;
      for (const call of [...watches]) {
        unwatch(call);
        call.emit("error", { code: grpc.status.UNAVAILABLE, details: "the server is stopping" });
      }
    },
  };
}
