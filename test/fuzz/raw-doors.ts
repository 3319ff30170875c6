import { type ClientHttp2Session, connect } from "node:http2";
import { gunzipSync } from "node:zlib";

/**
 * Raw binary calls through the doors that carry protobuf (Connect, gRPC-web, gRPC), with
 * bytes a typed client would never send. Each returns the protocol's own error form.
 */

/** What a binary door answered: HTTP status and the Connect or gRPC code and message. */
export interface RawAnswer {
  status: number;
  /** Connect code (`invalid_argument`), or the gRPC status number as a string (`3`). */
  code: string;
  message: string;
}

/** A gRPC / gRPC-web length-prefixed message: flags byte, big-endian length, bytes. */
export function envelope(bytes: Uint8Array, flags = 0): Uint8Array {
  const out = new Uint8Array(5 + bytes.length);
  out[0] = flags;
  new DataView(out.buffer).setUint32(1, bytes.length);
  out.set(bytes, 5);
  return out;
}

/** A Connect unary call with a binary (`application/proto`) body. */
export async function connectProto(
  baseUrl: string,
  path: string,
  body: Uint8Array,
  headers: Record<string, string> = {},
): Promise<RawAnswer> {
  const res = await fetch(`${baseUrl}${path}`, {
    method: "POST",
    headers: { "content-type": "application/proto", ...headers },
    body,
  });
  const text = await res.text();
  if (res.status === 200) return { status: 200, code: "ok", message: "" };
  let json: { code?: string; message?: string } = {};
  try {
    json = JSON.parse(text);
  } catch {}
  return { status: res.status, code: json.code ?? "", message: json.message ?? text };
}

/** The gRPC-web trailer frame at the end of a response body, as name → value. */
function webTrailer(bytes: Uint8Array, encoding: string | null): Map<string, string> {
  const trailer = new Map<string, string>();
  let at = 0;
  while (at + 5 <= bytes.length) {
    const flags = bytes[at] as number;
    const length = new DataView(bytes.buffer, bytes.byteOffset + at + 1, 4).getUint32(0);
    let data = bytes.subarray(at + 5, at + 5 + length);
    if (flags & 0x01 && encoding === "gzip") data = gunzipSync(data);
    if (flags & 0x80) {
      for (const line of new TextDecoder().decode(data).split("\r\n")) {
        const i = line.indexOf(":");
        if (i > 0) trailer.set(line.slice(0, i).trim().toLowerCase(), line.slice(i + 1).trim());
      }
    }
    at += 5 + length;
  }
  return trailer;
}

/** A gRPC-web call over HTTP/1.1 with raw (already enveloped, or not) body bytes. */
export async function grpcWeb(
  baseUrl: string,
  path: string,
  body: Uint8Array,
  headers: Record<string, string> = {},
): Promise<RawAnswer> {
  const res = await fetch(`${baseUrl}${path}`, {
    method: "POST",
    headers: { "content-type": "application/grpc-web+proto", ...headers },
    body,
  });
  const bytes = new Uint8Array(await res.arrayBuffer());
  const trailer = webTrailer(bytes, res.headers.get("grpc-encoding"));
  const code = res.headers.get("grpc-status") ?? trailer.get("grpc-status") ?? "";
  const message = res.headers.get("grpc-message") ?? trailer.get("grpc-message") ?? "";
  return { status: res.status, code, message: decodeURIComponent(message) };
}

const sessions = new Map<string, ClientHttp2Session>();

/** One HTTP/2 session per base URL, reused by the calls of a test file. */
function sessionFor(baseUrl: string): ClientHttp2Session {
  let s = sessions.get(baseUrl);
  if (!s || s.closed || s.destroyed) {
    s = connect(baseUrl);
    s.on("error", () => sessions.delete(baseUrl));
    s.unref();
    sessions.set(baseUrl, s);
  }
  return s;
}

/** Closes the sessions grpc() opened. */
export function closeSessions(): void {
  for (const s of sessions.values()) s.close();
  sessions.clear();
}

/** A gRPC call over cleartext HTTP/2 with raw body bytes (the caller envelopes them or not). */
export function grpc(
  baseUrl: string,
  path: string,
  body: Uint8Array,
  headers: Record<string, string> = {},
): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const stream = sessionFor(baseUrl).request({
      ":method": "POST",
      ":path": path,
      "content-type": "application/grpc+proto",
      te: "trailers",
      ...headers,
    });
    let status = 0;
    let head: Record<string, unknown> = {};
    stream.on("response", (h) => {
      status = Number(h[":status"]);
      head = h;
    });
    let trailers: Record<string, unknown> = {};
    stream.on("trailers", (t) => {
      trailers = t;
    });
    stream.on("data", () => {});
    stream.on("error", reject);
    stream.on("close", () => {
      const code = String(trailers["grpc-status"] ?? head["grpc-status"] ?? "");
      const message = String(trailers["grpc-message"] ?? head["grpc-message"] ?? "");
      resolve({ status, code, message: decodeURIComponent(message) });
    });
    stream.end(body);
  });
}

/** gRPC status codes a bad request must never produce: they say the server failed. */
export const SERVER_FAULT_GRPC_CODES = new Set(["2", "13", "14", "15"]);

/** Connect codes a bad request must never produce. */
export const SERVER_FAULT_CONNECT_CODES = new Set([
  "unknown",
  "internal",
  "unavailable",
  "data_loss",
]);
