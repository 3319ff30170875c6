import { promisify } from "node:util";
import { brotliDecompress, gunzip } from "node:zlib";
import { type DescMessage, getOption, hasOption } from "@bufbuild/protobuf";
import type { ContextValues } from "@connectrpc/connect";
import type { UniversalHandler, UniversalServerRequest } from "@connectrpc/connect/protocol";
import { rules as rulesOption } from "../../gen/latchkey/v2/options_pb.js";
import { callOf } from "../services/call.js";
import { wrapHandler } from "./wrap-handler.js";

/**
 * Protobuf JSON treats an omitted list as an empty one, so once connect-es has decoded a
 * Connect, gRPC or gRPC-web JSON body, `"roles": []` and no `roles` at all are the same
 * message. For a request with a required list (SetRoles, SetPermissions, ...) the difference
 * is whether a forgotten field wipes every grant, so this reads the top-level keys of such a
 * body before connect-es does and leaves them on the call for the validator.
 */

const gunzipAsync = promisify(gunzip);
const brotliAsync = promisify(brotliDecompress);

/** The 5-byte prefix of each message of the gRPC, gRPC-web and Connect streaming framing. */
const ENVELOPE = 5;

/** True when `input` has a top-level list a JSON body must name: only those are read. */
export function needsBodyKeys(input: DescMessage): boolean {
  return input.fields.some(
    (f) =>
      f.fieldKind === "list" && hasOption(f, rulesOption) && getOption(f, rulesOption).required,
  );
}

/** How a JSON body is framed, from its content type; undefined for binary protobuf. */
function jsonFraming(contentType: string): "unary" | "enveloped" | undefined {
  const type = (contentType.split(";")[0] ?? "").trim().toLowerCase();
  if (type === "application/json") return "unary";
  if (
    type === "application/grpc+json" ||
    type === "application/grpc-web+json" ||
    type === "application/connect+json"
  ) {
    return "enveloped";
  }
  return undefined;
}

/** Decompresses with a size cap; undefined for an encoding this cannot read or bad bytes. */
async function decompress(
  bytes: Uint8Array,
  encoding: string | null,
  max: number,
): Promise<Uint8Array | undefined> {
  try {
    if (encoding === null || encoding === "" || encoding === "identity") return bytes;
    if (encoding === "gzip") return await gunzipAsync(bytes, { maxOutputLength: max });
    if (encoding === "br") return await brotliAsync(bytes, { maxOutputLength: max });
  } catch {}
  return undefined;
}

/** The JSON text of the (first) message of a body, decompressed. */
async function messageBytes(
  bytes: Uint8Array,
  framing: "unary" | "enveloped",
  header: Headers,
  max: number,
): Promise<Uint8Array | undefined> {
  if (framing === "unary") return decompress(bytes, header.get("content-encoding"), max);
  if (bytes.length < ENVELOPE) return undefined;
  const length = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length).readUInt32BE(1);
  const data = bytes.subarray(ENVELOPE, ENVELOPE + length);
  if (((bytes[0] ?? 0) & 1) === 0) return data;
  const encoding = header.get("grpc-encoding") ?? header.get("connect-content-encoding");
  return decompress(data, encoding, max);
}

/** The top-level keys of a JSON object whose value is not null; undefined if it is none. */
function keysOf(bytes: Uint8Array): Set<string> | undefined {
  let json: unknown;
  try {
    json = JSON.parse(Buffer.from(bytes).toString("utf8"));
  } catch {
    return undefined;
  }
  if (typeof json !== "object" || json === null || Array.isArray(json)) return undefined;
  const present = json as Record<string, unknown>;
  return new Set(Object.keys(present).filter((k) => present[k] !== null));
}

/** Reads at most `max` bytes; `body` replays what was read, followed by the rest if any. */
async function readCapped(
  source: AsyncIterable<Uint8Array>,
  max: number,
): Promise<{ bytes?: Uint8Array; body: AsyncIterable<Uint8Array> }> {
  const it = source[Symbol.asyncIterator]();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const next = await it.next();
    if (next.done) {
      const bytes = Buffer.concat(chunks);
      return { bytes, body: replay([bytes]) };
    }
    chunks.push(next.value);
    size += next.value.length;
    if (size > max) return { body: replay(chunks, it) };
  }
}

async function* replay(
  chunks: Uint8Array[],
  rest?: AsyncIterator<Uint8Array>,
): AsyncIterable<Uint8Array> {
  yield* chunks;
  if (!rest) return;
  for (let next = await rest.next(); !next.done; next = await rest.next()) yield next.value;
}

async function* failing(err: unknown): AsyncIterable<Uint8Array> {
  yield* [];
  throw err;
}

function isIterable(body: unknown): body is AsyncIterable<Uint8Array> {
  return typeof body === "object" && body !== null && Symbol.asyncIterator in body;
}

/**
 * Wraps the universal handler of a method with a required list: for a JSON body, records
 * its top-level keys (those not null) on the call as `bodyKeys` and hands connect-es the same
 * bytes. A body it cannot read (too large, an unknown encoding, not a JSON object) records no
 * keys: a required list that decodes empty is then refused, and connect-es answers the rest.
 * Binary bodies pass untouched.
 */
export function withBodyKeys(handler: UniversalHandler, maxBodyBytes: number): UniversalHandler {
  const wrapped = async (req: UniversalServerRequest) => {
    const framing = jsonFraming(req.header.get("content-type") ?? "");
    if (framing === undefined || req.method !== "POST" || !isIterable(req.body)) {
      return handler(req);
    }
    let read: Awaited<ReturnType<typeof readCapped>>;
    try {
      read = await readCapped(req.body, maxBodyBytes + ENVELOPE);
    } catch (err) {
      return handler({ ...req, body: failing(err) });
    }
    const bytes = read.bytes && (await messageBytes(read.bytes, framing, req.header, maxBodyBytes));
    callOf(req.contextValues as ContextValues).bodyKeys =
      (bytes && keysOf(bytes)) ?? new Set<string>();
    return handler({ ...req, body: read.body });
  };
  return wrapHandler(handler, wrapped);
}
