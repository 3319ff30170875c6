import type { DescService } from "@bufbuild/protobuf";
import { createServiceImplSpec, type ServiceImpl, type ServiceImplSpec } from "@connectrpc/connect";
import { procedureOf } from "./procedures.js";

/**
 * Throws a TypeError naming the rpc unless `impl` serves exactly the rpcs `service` declares:
 * each rpc has a handler and a procedure option (its authentication and permissions), and
 * no handler is left without an rpc. Connect would otherwise answer a missing handler with
 * UNIMPLEMENTED at call time, and ignore a handler no rpc routes to.
 */
export function checkImplementation(service: DescService, impl: object): void {
  const handlers = impl as Record<string, unknown>;
  for (const m of service.methods) {
    if (typeof handlers[m.localName] !== "function")
      throw new TypeError(`rpc ${service.typeName}.${m.name} has no implementation`);
    procedureOf(m);
  }
  const declared = new Set(service.methods.map((m) => m.localName));
  for (const key of Object.keys(handlers)) {
    if (!declared.has(key))
      throw new TypeError(`${service.typeName} implements ${key}, which no rpc declares`);
  }
}

/** The spec of a served service, after `checkImplementation` (the server refuses to start). */
export function serve<S extends DescService>(service: S, impl: ServiceImpl<S>): ServiceImplSpec {
  checkImplementation(service, impl);
  return createServiceImplSpec<S>(service, impl);
}
