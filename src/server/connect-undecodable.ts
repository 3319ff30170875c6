import { Code, ConnectError, type ContextValues, type Interceptor } from "@connectrpc/connect";
import {
  createAsyncIterable,
  encodeEnvelope,
  mergeNonProtocolHeaders,
  type UniversalHandler,
  type UniversalServerRequest,
  type UniversalServerResponse,
} from "@connectrpc/connect/protocol";
import { codeToHttpStatus, errorToJsonBytes } from "@connectrpc/connect/protocol-connect";
import { setTrailerStatus } from "@connectrpc/connect/protocol-grpc";
import { trailerFlag, trailerParse, trailerSerialize } from "@connectrpc/connect/protocol-grpc-web";
import { bindRefusal, type UnarySpec } from "./invoke.js";
import { LiteHeaders } from "./lite-headers.js";
import { wrapHandler } from "./wrap-handler.js";

/**
 * connect-es answers a request body it cannot decode (bytes that are not the method's
 * message, an envelope flagged compressed without an encoding, a compressed body that does
 * not decompress) with `internal`, as if the server had failed: its decoders wrap every
 * failure so, before any interceptor runs. This turns that answer into what the caller's
 * bytes deserve: the same 400 `invalid_input` (gRPC INVALID_ARGUMENT) the /v2 door gives a
 * body that is not JSON, produced by the shared interceptors, so it is authenticated first,
 * logged, counted and carries the ErrorDetail.
 */
const PARSE_FAILURE = "parse binary: ";
const BODY_FAILURES = [
  "received compressed envelope, but do not know how to decompress",
  "decompression failed",
];

/**
 * When an answer says the request body could not be decoded: what to tell the caller
 * about its body. Otherwise undefined.
 */
function reasonOf(
  code: string | null | undefined,
  message: string | null | undefined,
): string | undefined {
  if (code !== "internal" && code !== String(Code.Internal)) return undefined;
  if (message?.startsWith(PARSE_FAILURE)) {
    return `is not a valid protobuf message: ${message.slice(PARSE_FAILURE.length)}`;
  }
  return message && BODY_FAILURES.includes(message) ? `could not be read: ${message}` : undefined;
}

async function readAll(body: AsyncIterable<Uint8Array> | undefined): Promise<Uint8Array> {
  const chunks: Uint8Array[] = [];
  if (body) for await (const chunk of body) chunks.push(chunk);
  return Buffer.concat(chunks);
}

/** The error the interceptors make of an undecodable body for this call. */
async function refusal(
  refuse: ReturnType<typeof bindRefusal>,
  req: UniversalServerRequest,
  protocolName: string,
  reason: string,
): Promise<ConnectError> {
  const header = new LiteHeaders();
  for (const [name, value] of req.header) header.set(name, value);
  const values = req.contextValues as ContextValues; // the door always sets them
  const call = { protocolName, requestMethod: req.method, url: req.url, header, values };
  return ConnectError.from(await refuse(call, [{ location: "", message: reason }]));
}

/**
 * Connect maps `unimplemented` to HTTP 501; for a body in an encoding the server does not
 * speak, HTTP's own answer is 415 (RFC 9110, 15.5.16). The Connect code in the body stays.
 */
const UNKNOWN_ENCODING = "unknown compression ";
/**
 * Connect maps `resource_exhausted` to HTTP 429 ("Too Many Requests"); a body over the size
 * limit is HTTP 413, as the door already answers when Content-Length declares it.
 */
const TOO_LARGE = "larger than configured readMaxBytes";

/** A Connect unary error answer (HTTP 500, 501 or 429) rewritten when the body was the fault. */
async function connectUnary(
  res: UniversalServerResponse,
  refuseWith: (reason: string) => Promise<ConnectError>,
): Promise<UniversalServerResponse> {
  const bytes = await readAll(res.body);
  let json: { code?: string; message?: string } = {};
  try {
    json = JSON.parse(Buffer.from(bytes).toString("utf8"));
  } catch {}
  if (json.code === "unimplemented" && json.message?.startsWith(UNKNOWN_ENCODING)) {
    return { ...res, status: 415, body: createAsyncIterable([bytes]) };
  }
  if (json.code === "resource_exhausted" && json.message?.includes(TOO_LARGE)) {
    return { ...res, status: 413, body: createAsyncIterable([bytes]) };
  }
  const reason = reasonOf(json.code, json.message);
  if (reason === undefined) return { ...res, body: createAsyncIterable([bytes]) };
  const err = await refuseWith(reason);
  const body = errorToJsonBytes(err, undefined);
  const header = new Headers(res.header);
  mergeNonProtocolHeaders(header, err.metadata);
  header.set("content-length", String(body.byteLength));
  return { ...res, status: codeToHttpStatus(err.code), header, body: createAsyncIterable([body]) };
}

/** A gRPC answer: the status is in the trailer, set by the time the handler resolves. */
async function grpcTrailer(
  res: UniversalServerResponse,
  refuseWith: (reason: string) => Promise<ConnectError>,
): Promise<UniversalServerResponse> {
  const trailer = res.trailer;
  const message = trailer?.get("grpc-message");
  const reason = reasonOf(trailer?.get("grpc-status"), message && decodeURIComponent(message));
  if (trailer && reason !== undefined) setTrailerStatus(trailer, await refuseWith(reason));
  return res;
}

/** A gRPC-web answer: an error is a lone trailer frame at the start of the body. */
async function grpcWebTrailer(
  res: UniversalServerResponse,
  refuseWith: (reason: string) => Promise<ConnectError>,
): Promise<UniversalServerResponse> {
  if (!res.body) return res;
  const it = res.body[Symbol.asyncIterator]();
  const first = await it.next();
  if (first.done) return res;
  let chunk = first.value;
  // An uncompressed trailer frame (flag 0x80 alone) is the whole answer of a failed call.
  if (chunk[0] === trailerFlag && chunk.length >= 5) {
    const trailer = trailerParse(chunk.subarray(5));
    const message = trailer.get("grpc-message");
    const reason = reasonOf(trailer.get("grpc-status"), message && decodeURIComponent(message));
    if (reason !== undefined) {
      setTrailerStatus(trailer, await refuseWith(reason));
      chunk = encodeEnvelope(trailerFlag, trailerSerialize(trailer));
    }
  }
  const rest = { [Symbol.asyncIterator]: () => it };
  return {
    ...res,
    body: (async function* () {
      yield chunk;
      yield* rest;
    })(),
  };
}

/**
 * Wraps a unary method's universal handler so that a request body its decoder refuses
 * is answered as the caller's error (see PARSE_FAILURE above), on Connect, gRPC and
 * gRPC-web alike. Other answers pass through untouched.
 */
export function answerUndecodable(
  handler: UniversalHandler,
  spec: UnarySpec,
  interceptors: readonly Interceptor[],
): UniversalHandler {
  const refuse = bindRefusal(spec, interceptors);
  const wrapped = async (req: UniversalServerRequest): Promise<UniversalServerResponse> => {
    const res = await handler(req);
    const type = req.header.get("content-type") ?? "";
    const protocol = type.startsWith("application/grpc-web")
      ? "grpc-web"
      : type.startsWith("application/grpc")
        ? "grpc"
        : "connect";
    const refuseWith = (reason: string) => refusal(refuse, req, protocol, reason);
    if (protocol === "grpc-web") return grpcWebTrailer(res, refuseWith);
    if (protocol === "grpc") return grpcTrailer(res, refuseWith);
    if (res.status === 500 || res.status === 501 || res.status === 429) {
      return connectUnary(res, refuseWith);
    }
    return res;
  };
  return wrapHandler(handler, wrapped);
}
