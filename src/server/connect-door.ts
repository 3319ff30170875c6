import {
  type ConnectRouter,
  createContextValues,
  type Interceptor,
  type ServiceImplSpec,
} from "@connectrpc/connect";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import { newId } from "../domain/ids.js";
import type { Door } from "../services/call.js";
import { setCall } from "../services/call.js";
import { baseUrlOf, type NodeRequest } from "./node-io.js";

/** What the Connect door needs. */
export interface ConnectDoorOptions {
  services: readonly ServiceImplSpec[];
  interceptors: Interceptor[];
  maxBodyBytes: number;
  shutdownSignal: AbortSignal;
}

function doorOf(contentType: string | undefined): Door {
  if (!contentType) return "connect";
  if (contentType.startsWith("application/grpc-web")) return "grpc-web";
  if (contentType.startsWith("application/grpc")) return "grpc";
  return "connect";
}

/**
 * Connect, gRPC-web and gRPC at their standard paths (`/latchkey.v2.ApisService/CreateApi`)
 * through connect-node, with the shared interceptors. Connect JSON rejects unknown
 * fields, and every protocol reads at most `maxBodyBytes` per message.
 */
export function createConnectDoor(opts: ConnectDoorOptions) {
  return connectNodeAdapter({
    routes(router: ConnectRouter) {
      for (const spec of opts.services) {
        for (const m of Object.values(spec.methods)) {
          if (m.kind === "unary") router.rpc(m.method, m.impl);
        }
      }
    },
    interceptors: opts.interceptors,
    readMaxBytes: opts.maxBodyBytes,
    jsonOptions: { ignoreUnknownFields: false },
    shutdownSignal: opts.shutdownSignal,
    contextValues: (req: NodeRequest) =>
      setCall(createContextValues(), {
        requestId: newId("req"),
        door: doorOf(req.headers["content-type"]),
        baseUrl: baseUrlOf(req),
      }),
  });
}
