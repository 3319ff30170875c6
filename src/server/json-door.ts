import { create, type Message } from "@bufbuild/protobuf";
import type { Interceptor, ServiceImplSpec } from "@connectrpc/connect";
import { newId } from "../domain/ids.js";
import { errors, type ServiceError, type Violation } from "../errors/service-error.js";
import type { Logger } from "../log.js";
import type { Metrics } from "../metrics.js";
import { type Call, callValues } from "../services/call.js";
import { namespaceOf, procedureOf } from "../services/procedures.js";
import { errorEnvelope } from "./error-envelope.js";
import { ClientGoneError, errorType, toServiceError } from "./interceptors/request-context.js";
import { type BoundProcedure, bindUnary, type UnarySpec } from "./invoke.js";
import { acceptBareArray, decodeObject, encodeJson } from "./json-codec.js";
import { LiteHeaders } from "./lite-headers.js";
import {
  BodyTooLargeError,
  type NodeRequest,
  type NodeResponse,
  readBody,
  sendJson,
  sendJsonText,
} from "./node-io.js";

/** What the /v2 door needs. */
export interface JsonDoorOptions {
  services: readonly ServiceImplSpec[];
  interceptors: Interceptor[];
  maxBodyBytes: number;
  docsUrl: string | undefined;
  log: Logger;
  metrics: Metrics;
}

/** The liveness procedure is also served at this path, by POST and by GET. */
const LIVENESS_PATH = "/v2/liveness";

/** True for `application/json`, with or without parameters. */
export function isJsonContentType(value: string | undefined): boolean {
  if (value === "application/json") return true;
  if (!value) return false;
  const type = value.split(";", 1)[0]?.trim().toLowerCase();
  return type === "application/json";
}

interface Route {
  spec: UnarySpec;
  invoke: BoundProcedure;
  procedure: string;
}

/** Maps `/v2/<namespace>.<procedure>` to every registered RPC, bound to the interceptors. */
function routeTable(
  services: readonly ServiceImplSpec[],
  interceptors: readonly Interceptor[],
): Map<string, Route> {
  const routes = new Map<string, Route>();
  for (const s of services) {
    for (const m of Object.values(s.methods)) {
      if (m.kind !== "unary") continue;
      routes.set(`/v2/${namespaceOf(s.service)}.${m.method.localName}`, {
        spec: m,
        invoke: bindUnary(m, interceptors, "init shape"),
        procedure: procedureOf(m.method).name,
      });
    }
  }
  const liveness = routes.get("/v2/liveness.check");
  if (liveness) routes.set(LIVENESS_PATH, liveness);
  return routes;
}

/**
 * The /v2 JSON door: `POST /v2/<service>.<procedure>` with a JSON body, answered with the
 * envelope. It decodes the body itself (see json-codec.ts) and calls the same
 * implementation, through the same interceptors, that Connect and gRPC reach: directly,
 * through a HandlerContext, without a second protocol layer.
 */
export function createJsonDoor(opts: JsonDoorOptions) {
  const routes = routeTable(opts.services, opts.interceptors);

  function sendError(res: NodeResponse, call: Call, err: ServiceError): void {
    const type = errorType(opts.docsUrl, err);
    const headers: Record<string, string> = { "x-request-id": call.requestId };
    if (err.entry.status === 405) headers.allow = "POST";
    // The unread rest of an oversized body would be parsed as the next request.
    if (err.entry.status === 413 && req11(res)) headers.connection = "close";
    sendJson(res, err.entry.status, errorEnvelope(err, call.requestId, type), headers);
  }

  return async function handleJson(req: NodeRequest, res: NodeResponse): Promise<void> {
    const started = performance.now();
    const url = req.url ?? "/";
    const query = url.indexOf("?");
    const path = query < 0 ? url : url.slice(0, query);
    const call: Call = { requestId: newId("req"), door: "json" };
    const route = routes.get(path);
    const procedure = route ? route.procedure : "unknown";
    try {
      if (!route) throw errors.routeNotFound(path);
      const spec = route.spec;
      const isGetLiveness = req.method === "GET" && path === LIVENESS_PATH;
      if (req.method !== "POST" && !isGetLiveness) throw errors.methodNotAllowed(req.method ?? "");
      let message: Message;
      if (isGetLiveness) message = create(spec.method.input);
      else {
        if (!isJsonContentType(req.headers["content-type"])) {
          throw errors.unsupportedMediaType(req.headers["content-type"]);
        }
        const declared = Number(req.headers["content-length"] ?? 0);
        if (declared > opts.maxBodyBytes) throw errors.bodyTooLarge(opts.maxBodyBytes);
        const body = await readBody(req, opts.maxBodyBytes).catch((err: unknown) => {
          // The request stream fails only when the client goes away mid-body.
          throw err instanceof BodyTooLargeError
            ? err
            : new ClientGoneError("the client closed the connection", { cause: err });
        });
        const violations: Violation[] = [];
        message = decodeObject(
          spec.method.input,
          acceptBareArray(spec.method.input, parseJson(body)),
          "",
          violations,
        ) as unknown as Message;
        call.decodeViolations = violations;
      }
      const result = await route.invoke(
        {
          protocolName: "json",
          requestMethod: req.method ?? "POST",
          url: path,
          header: LiteHeaders.fromNode(req.headers),
          values: callValues(call),
        },
        message,
      );
      const body = encodeJson(
        spec.method.output,
        result.message as unknown as Record<string, unknown>,
      );
      // A JSON answer has no trailers: any go out as headers, as they always have.
      const headers = result.header.toRecord();
      if (!result.trailer.isEmpty()) Object.assign(headers, result.trailer.toRecord());
      sendJsonText(res, 200, body, headers);
    } catch (thrown) {
      const err =
        thrown instanceof BodyTooLargeError
          ? errors.bodyTooLarge(opts.maxBodyBytes)
          : toServiceError(thrown, opts.log, call.requestId);
      if (res.headersSent) {
        res.destroy();
        return;
      }
      sendError(res, call, err);
      // Calls that reached the interceptors carry a detail and were counted there.
      if (err.details.length === 0) {
        opts.metrics.observe(
          procedure,
          "json",
          err.entry.status,
          (performance.now() - started) / 1000,
        );
      }
    }
  };
}

/** True for an HTTP/1.x response, where a Connection header is allowed. */
function req11(res: NodeResponse): boolean {
  return !("stream" in res);
}

function parseJson(body: Buffer): unknown {
  try {
    return JSON.parse(body.toString("utf8"));
  } catch (err) {
    throw errors.invalidInput(
      [{ location: "", message: `is not valid JSON: ${(err as Error).message}` }],
      "The request body is not valid JSON.",
    );
  }
}
