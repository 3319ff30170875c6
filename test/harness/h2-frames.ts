import net from "node:net";

/**
 * A raw HTTP/2 client for attack tests: it writes frames as a hostile peer would (streams
 * beyond the advertised cap, header blocks never finished) and records what the server
 * sends back, frame by frame. Headers are HPACK literals without indexing or Huffman.
 */

/** The connection preface every HTTP/2 client sends first. */
export const PREFACE = Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", "latin1");

export const FRAME = { data: 0, headers: 1, rstStream: 3, settings: 4, goaway: 7 } as const;
export const FLAG = { endStream: 0x1, ack: 0x1, endHeaders: 0x4 } as const;
/** RST_STREAM error code of a stream the server would not open. */
export const REFUSED_STREAM = 7;

/** One frame: 9 bytes of header, then the payload. */
export function frame(
  type: number,
  flags: number,
  streamId: number,
  payload: Buffer = Buffer.alloc(0),
) {
  const head = Buffer.alloc(9);
  head.writeUIntBE(payload.length, 0, 3);
  head.writeUInt8(type, 3);
  head.writeUInt8(flags, 4);
  head.writeUInt32BE(streamId & 0x7fffffff, 5);
  return Buffer.concat([head, payload]);
}

/** An HPACK integer with an n-bit prefix (RFC 7541, 5.1). */
function hpackInt(value: number, prefixBits: number): number[] {
  const max = (1 << prefixBits) - 1;
  if (value < max) return [value];
  const out = [max];
  let rest = value - max;
  while (rest >= 128) {
    out.push((rest % 128) + 128);
    rest = Math.floor(rest / 128);
  }
  out.push(rest);
  return out;
}

/** A header block of literal fields without indexing, new names, no Huffman coding. */
export function headerBlock(headers: Record<string, string>): Buffer {
  const bytes: number[] = [];
  for (const [name, value] of Object.entries(headers)) {
    bytes.push(0x00, ...hpackInt(name.length, 7), ...Buffer.from(name, "latin1"));
    bytes.push(...hpackInt(value.length, 7), ...Buffer.from(value, "latin1"));
  }
  return Buffer.from(bytes);
}

/** A frame the server sent. */
export interface ReceivedFrame {
  type: number;
  flags: number;
  streamId: number;
  payload: Buffer;
}

/** A raw HTTP/2 connection and everything the server has sent on it. */
export interface RawH2 {
  socket: net.Socket;
  frames: ReceivedFrame[];
  closed: boolean;
  /** Streams the server refused with RST_STREAM REFUSED_STREAM. */
  refused(): number;
  /** The last stream id of the server's GOAWAY, if it sent one. */
  goawayLastStreamId(): number | undefined;
}

/** Connects and parses the server's frames as they arrive (the preface is not sent). */
export async function connectRaw(port: number): Promise<RawH2> {
  const socket = net.connect(port, "127.0.0.1");
  await new Promise<void>((resolve, reject) => {
    socket.once("connect", () => resolve());
    socket.once("error", reject);
  });
  const conn: RawH2 = {
    socket,
    frames: [],
    closed: false,
    refused: () =>
      conn.frames.filter(
        (f) => f.type === FRAME.rstStream && f.payload.readUInt32BE(0) === REFUSED_STREAM,
      ).length,
    goawayLastStreamId() {
      const g = conn.frames.find((f) => f.type === FRAME.goaway);
      return g ? g.payload.readUInt32BE(0) & 0x7fffffff : undefined;
    },
  };
  let buffered = Buffer.alloc(0);
  socket.on("data", (chunk: Buffer) => {
    buffered = Buffer.concat([buffered, chunk]);
    while (buffered.length >= 9) {
      const length = buffered.readUIntBE(0, 3);
      if (buffered.length < 9 + length) break;
      conn.frames.push({
        type: buffered.readUInt8(3),
        flags: buffered.readUInt8(4),
        streamId: buffered.readUInt32BE(5) & 0x7fffffff,
        payload: buffered.subarray(9, 9 + length),
      });
      buffered = buffered.subarray(9 + length);
    }
  });
  socket.on("error", () => {});
  socket.once("close", () => {
    conn.closed = true;
  });
  return conn;
}

/** The headers of a unary request on the main port (Connect, binary) or the gRPC port. */
export function requestHeaders(path: string, contentType: string): Record<string, string> {
  return {
    ":method": "POST",
    ":scheme": "http",
    ":authority": "localhost",
    ":path": path,
    "content-type": contentType,
    te: "trailers",
  };
}
