import type { ConnectRouter, Interceptor, ServiceImplSpec } from "@connectrpc/connect";
import type { UniversalHandler } from "@connectrpc/connect/protocol";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import { newId } from "../domain/ids.js";
import { callValues, type Door } from "../services/call.js";
import { answerUndecodable } from "./connect-undecodable.js";
import { needsBodyKeys, withBodyKeys } from "./json-body-keys.js";
import { type NodeRequest, type NodeResponse, sendJson } from "./node-io.js";

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
 * fields, every protocol reads at most `maxBodyBytes` per message, a binary body that
 * is not a message is the caller's error, not the server's (see connect-undecodable.ts), and
 * a JSON body's top-level keys are read for methods with a required list (json-body-keys.ts).
 */
export function createConnectDoor(opts: ConnectDoorOptions) {
  const adapter = connectNodeAdapter({
    routes(router: ConnectRouter) {
      for (const spec of opts.services) {
        for (const m of Object.values(spec.methods)) {
          if (m.kind !== "unary") continue;
          router.rpc(m.method, m.impl);
          // The adapter serves router.handlers as they are once this callback returns.
          const last = router.handlers.length - 1;
          const handler = router.handlers[last] as UniversalHandler;
          router.handlers[last] = answerUndecodable(
            needsBodyKeys(m.method.input) ? withBodyKeys(handler, opts.maxBodyBytes) : handler,
            m,
            opts.interceptors,
          );
        }
      }
    },
    interceptors: opts.interceptors,
    readMaxBytes: opts.maxBodyBytes,
    jsonOptions: { ignoreUnknownFields: false },
    shutdownSignal: opts.shutdownSignal,
    contextValues: (req: NodeRequest) =>
      callValues({
        requestId: newId("req"),
        door: doorOf(req.headers["content-type"]),
      }),
  });
  return (req: NodeRequest, res: NodeResponse): void => {
    // Connect answers an oversized message with resource_exhausted, which the Connect
    // protocol maps to HTTP 429; a declared oversized body gets the 413 it deserves.
    const type = req.headers["content-type"] ?? "";
    if (
      !type.startsWith("application/grpc") &&
      Number(req.headers["content-length"] ?? 0) > opts.maxBodyBytes
    ) {
      sendJson(
        res,
        413,
        {
          code: "resource_exhausted",
          message: `The request body exceeds the maximum allowed size of ${opts.maxBodyBytes} bytes.`,
        },
        "stream" in res ? {} : { connection: "close" },
      );
      return;
    }
    adapter(req as Parameters<typeof adapter>[0], res as Parameters<typeof adapter>[1]);
  };
}
