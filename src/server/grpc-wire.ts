import { gunzipSync, inflateSync } from "node:zlib";
import { Code, type ConnectError } from "@connectrpc/connect";
import { setTrailerStatus } from "@connectrpc/connect/protocol-grpc";

/**
 * The gRPC wire format of the gRPC port (gRPC over HTTP/2): length-prefixed messages, the
 * request headers that change how they are read (grpc-encoding, grpc-timeout) and the status
 * trailers. Everything here is a pure function of bytes and headers, so that the door
 * (grpc-door.ts) is only about routing and answering.
 */

/** What the port reads: uncompressed, gzip and deflate (as grpc-js and grpc-go servers do). */
export const ACCEPTED_ENCODINGS = "identity,gzip,deflate";

/** One violation of the caller's request: where (`""` is the whole body) and why. */
export interface CallerFault {
  location: string;
  message: string;
}

/** A status trailer block: grpc-status, grpc-message and, for errors, grpc-status-details-bin. */
export type StatusTrailers = Record<string, string>;

/** The frame of one message: flag 0 (not compressed), its length, the message. */
export function frame(message: Uint8Array): Buffer {
  const out = Buffer.allocUnsafe(5 + message.length);
  out[0] = 0;
  out.writeUInt32BE(message.length, 1);
  out.set(message, 5);
  return out;
}

/** Thrown by FrameReader and decompress: the caller sent bytes the port cannot read. */
export class WireFault extends Error {
  constructor(
    readonly code: Code,
    message: string,
  ) {
    super(message);
  }
}

/**
 * Reads length-prefixed messages from the chunks of a request body as they arrive. A message
 * declaring more than `maxBytes` fails at its prefix, before its bytes are buffered.
 */
export class FrameReader {
  private pending: Buffer[] = [];
  private pendingBytes = 0;

  constructor(private readonly maxBytes: number) {}

  /** The messages completed by `chunk`, each with its compressed flag. */
  push(chunk: Buffer): { compressed: boolean; bytes: Buffer }[] {
    this.pending.push(chunk);
    this.pendingBytes += chunk.length;
    const out: { compressed: boolean; bytes: Buffer }[] = [];
    while (this.pendingBytes >= 5) {
      const head = this.peek(5);
      const flag = head[0] as number;
      const length = head.readUInt32BE(1);
      if (flag > 1) {
        throw new WireFault(Code.InvalidArgument, `a message frame has the unknown flag ${flag}`);
      }
      if (length > this.maxBytes) {
        throw new WireFault(
          Code.ResourceExhausted,
          `the request message is ${length} bytes; this server reads at most ${this.maxBytes}`,
        );
      }
      if (this.pendingBytes < 5 + length) break;
      const whole = this.take(5 + length);
      out.push({ compressed: flag === 1, bytes: whole.subarray(5) });
    }
    return out;
  }

  /** Bytes received that do not make a whole message (a request cut short). */
  get leftover(): number {
    return this.pendingBytes;
  }

  private peek(n: number): Buffer {
    const first = this.pending[0] as Buffer;
    if (first.length >= n) return first;
    this.pending = [Buffer.concat(this.pending)];
    return this.pending[0] as Buffer;
  }

  private take(n: number): Buffer {
    const first = this.peek(n);
    const out = first.length === n ? first : first.subarray(0, n);
    const rest = first.subarray(n);
    this.pending[0] = rest;
    if (rest.length === 0) this.pending.shift();
    this.pendingBytes -= n;
    return out;
  }
}

/**
 * The request's `grpc-encoding`, normalised: undefined for identity (or none). An encoding
 * the port does not read is UNIMPLEMENTED, as the gRPC protocol asks.
 */
export function requestEncoding(header: string | undefined): "gzip" | "deflate" | undefined {
  if (header === undefined || header === "" || header === "identity") return undefined;
  if (header === "gzip" || header === "deflate") return header;
  throw new WireFault(
    Code.Unimplemented,
    `grpc-encoding ${header} is not supported; this server reads ${ACCEPTED_ENCODINGS}`,
  );
}

/** A compressed message, decompressed to at most `maxBytes`. */
export function decompress(
  bytes: Buffer,
  encoding: "gzip" | "deflate" | undefined,
  maxBytes: number,
): Buffer {
  if (encoding === undefined) {
    throw new WireFault(
      Code.InvalidArgument,
      "could not be read: the message is flagged compressed but the call declares no grpc-encoding",
    );
  }
  try {
    const options = { maxOutputLength: maxBytes };
    return encoding === "gzip" ? gunzipSync(bytes, options) : inflateSync(bytes, options);
  } catch (err) {
    if ((err as { code?: string }).code === "ERR_BUFFER_TOO_LARGE") {
      throw new WireFault(
        Code.ResourceExhausted,
        `the request message decompresses to more than ${maxBytes} bytes, the most this server reads`,
      );
    }
    throw new WireFault(
      Code.InvalidArgument,
      "could not be read: the message is flagged compressed but does not decompress with its grpc-encoding",
    );
  }
}

const TIMEOUT_UNITS_MS: Record<string, number> = {
  H: 3_600_000,
  M: 60_000,
  S: 1_000,
  m: 1,
  u: 0.001,
  n: 0.000_001,
};

/**
 * The call's deadline from `grpc-timeout` (1 to 8 digits and a unit), in milliseconds from
 * now; undefined without the header. A malformed value is the caller's fault.
 */
export function timeoutMs(header: string | undefined): number | undefined {
  if (header === undefined) return undefined;
  const m = /^(\d{1,8})([HMSmun])$/.exec(header);
  if (!m) throw new TimeoutFault(header);
  return Number(m[1]) * (TIMEOUT_UNITS_MS[m[2] as string] as number);
}

/** A `grpc-timeout` that is not a timeout, as a fault of the request's field of that name. */
export class TimeoutFault extends Error {
  readonly fault: CallerFault;
  constructor(value: string) {
    const message = `must be 1 to 8 digits and a unit (H, M, S, m, u or n), as in 500m (got "${value}")`;
    super(message);
    this.fault = { location: "grpc-timeout", message };
  }
}

/** The trailers of a call that succeeded. */
export const OK_TRAILERS: StatusTrailers = Object.freeze({ "grpc-status": "0" }) as StatusTrailers;

/**
 * The trailers of a failed call: its code, its message (percent-encoded) and its details
 * (our ErrorDetail) in grpc-status-details-bin, plus whatever metadata the error carries
 * (the request id), as Connect's own gRPC protocol writes them.
 */
export function errorTrailers(err: ConnectError): StatusTrailers {
  const out: StatusTrailers = {};
  for (const [name, value] of setTrailerStatus(new Headers(), err)) out[name] = value;
  // Connect encodes the message as a URI component (":" as %3A); clients that decode only
  // what the gRPC protocol encodes would show those escapes.
  out["grpc-message"] = percentEncoded(err.rawMessage);
  return out;
}

/** The trailers of a status the door itself answers (no details). */
export function statusTrailers(code: Code, message: string): StatusTrailers {
  return { "grpc-status": String(code), "grpc-message": percentEncoded(message) };
}

/**
 * grpc-message as the gRPC protocol encodes it: the UTF-8 bytes outside printable ASCII
 * (0x20-0x7E), and "%" itself, as %XX; everything else as it is.
 */
export function percentEncoded(message: string): string {
  if (!/[^\x20-\x24\x26-\x7e]/.test(message)) return message;
  let out = "";
  for (const byte of Buffer.from(message, "utf8")) {
    out +=
      byte >= 0x20 && byte <= 0x7e && byte !== 0x25
        ? String.fromCharCode(byte)
        : `%${byte.toString(16).toUpperCase().padStart(2, "0")}`;
  }
  return out;
}
