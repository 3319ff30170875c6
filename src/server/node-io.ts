import type { IncomingMessage, ServerResponse } from "node:http";
import type { Http2ServerRequest, Http2ServerResponse } from "node:http2";

/** A request of either the HTTP/1.1 server or the HTTP/2 compatibility API. */
export type NodeRequest = IncomingMessage | Http2ServerRequest;
/** A response of either server. */
export type NodeResponse = ServerResponse | Http2ServerResponse;

/** Thrown by readBody when the body exceeds its limit. */
export class BodyTooLargeError extends Error {
  override name = "BodyTooLargeError";
}

/** Reads the whole body, failing as soon as it grows past `limit` bytes. */
export function readBody(req: NodeRequest, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        req.off("data", onData);
        reject(new BodyTooLargeError(`body exceeds ${limit} bytes`));
        return;
      }
      chunks.push(chunk);
    };
    req.on("data", onData);
    req.once("end", () =>
      resolve(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, size)),
    );
    req.once("error", reject);
  });
}

/** Writes a JSON response with an exact Content-Length. */
export function sendJson(
  res: NodeResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  sendJsonText(res, status, JSON.stringify(body), headers);
}

/** Writes JSON text, already encoded, as a response with an exact Content-Length. */
export function sendJsonText(
  res: NodeResponse,
  status: number,
  text: string,
  headers: Record<string, string> = {},
): void {
  const all: Record<string, string> = {
    "content-type": "application/json",
    "content-length": String(Buffer.byteLength(text)),
  };
  for (const name in headers) all[name] = headers[name] as string;
  (res as ServerResponse).writeHead(status, all);
  res.end(text);
}
