import type { UniversalHandler, UniversalHandlerFn } from "@connectrpc/connect/protocol";

/**
 * A handler that runs `fn` in place of `handler` and routes like it: the router and the
 * Node adapter read the path, method and content types from the handler's own properties.
 */
export function wrapHandler(handler: UniversalHandler, fn: UniversalHandlerFn): UniversalHandler {
  return Object.assign(fn, {
    requestPath: handler.requestPath,
    service: handler.service,
    method: handler.method,
    protocolNames: handler.protocolNames,
    allowedMethods: handler.allowedMethods,
    supportedContentType: handler.supportedContentType,
  });
}
