import { connect } from "node:http2";
import { gzipSync } from "node:zlib";
import { create, toBinary } from "@bufbuild/protobuf";
import { findTrailerError } from "@connectrpc/connect/protocol-grpc";
import { afterAll, describe, expect, it } from "vitest";
import { CreateApiRequestSchema } from "../../gen/latchkey/v2/apis_pb.js";
import { ErrorDetailSchema } from "../../gen/latchkey/v2/common_pb.js";
import {
  FrameReader,
  percentEncoded,
  requestEncoding,
  timeoutMs,
  WireFault,
} from "../../src/server/grpc-wire.js";
import { envelope, grpc as rawGrpc } from "../fuzz/raw-doors.js";
import { useServer } from "../harness/server.js";

/**
 * Faults of the caller that only the gRPC wire shows (a message flagged gzip that does not
 * gunzip, a malformed grpc-timeout) are INVALID_ARGUMENT with the usual error detail, after
 * the root key is checked, and the procedure never runs; a gRPC library's server would answer
 * them INTERNAL, as if the server had failed.
 */

const s = useServer();
const sessions: ReturnType<typeof connect>[] = [];
afterAll(() => {
  for (const session of sessions) session.close();
});

const PATH = "/latchkey.v2.ApisService/CreateApi";
const MESSAGE = toBinary(CreateApiRequestSchema, create(CreateApiRequestSchema, { name: "zip" }));
const GZIPPED = gzipSync(MESSAGE);
const CUT = GZIPPED.subarray(0, GZIPPED.length >> 1);

interface Answer {
  code: number;
  message: string;
  error: ReturnType<typeof findTrailerError>;
}

/** A raw gRPC call to the gRPC port: its status, message and error with its details. */
function call(body: Uint8Array, headers: Record<string, string>): Promise<Answer> {
  const session = connect(`http://127.0.0.1:${s.app.grpcPort}`);
  sessions.push(session);
  return new Promise((resolve, reject) => {
    const stream = session.request({
      ":method": "POST",
      ":path": PATH,
      "content-type": "application/grpc+proto",
      te: "trailers",
      ...headers,
    });
    const status = new Headers();
    const keep = (h: Record<string, unknown>) => {
      for (const [name, value] of Object.entries(h)) {
        if (!name.startsWith(":")) status.set(name, String(value));
      }
    };
    stream.on("response", keep);
    stream.on("trailers", keep);
    stream.on("data", () => {});
    stream.on("error", reject);
    stream.on("close", () => {
      resolve({
        code: Number(status.get("grpc-status")),
        message: decodeURIComponent(status.get("grpc-message") ?? ""),
        error: findTrailerError(status),
      });
    });
    stream.end(body);
  });
}

const auth = () => ({ authorization: `Bearer ${s.rootKey}` });

function detailOf(answer: Answer) {
  return answer.error?.findDetails(ErrorDetailSchema)[0];
}

describe("the gRPC port and the faults of the wire", () => {
  it("a message flagged gzip that does not gunzip is INVALID_ARGUMENT with the error detail", async () => {
    const before = await s.snapshot();
    const res = await call(envelope(CUT, 1), { ...auth(), "grpc-encoding": "gzip" });
    expect(res.code, res.message).toBe(3);
    expect(res.message).toMatch(/^body: could not be read: .*does not decompress/);
    const detail = detailOf(res);
    expect(detail?.status).toBe(400);
    expect(detail?.code).toMatch(/invalid_input$/);
    expect(detail?.errors).toEqual([expect.objectContaining({ location: "" })]);
    expect(detail?.requestId).toMatch(/^req_/);
    expect(await s.changesSince(before)).toEqual({});
  });

  it("a malformed grpc-timeout is INVALID_ARGUMENT with the error detail, and nothing runs", async () => {
    const before = await s.snapshot();
    for (const timeout of ["soon", "-1", "S"]) {
      const res = await call(envelope(MESSAGE), { ...auth(), "grpc-timeout": timeout });
      expect(res.code, `${timeout}: ${res.message}`).toBe(3);
      expect(res.message).toContain(`grpc-timeout: must be 1 to 8 digits`);
      expect(res.message).toContain(`(got "${timeout}")`);
      expect(detailOf(res)?.errors).toEqual([
        expect.objectContaining({ location: "grpc-timeout" }),
      ]);
    }
    expect(await s.changesSince(before)).toEqual({});
  });

  it("checks the root key first, as for any invalid request", async () => {
    const zip = await call(envelope(CUT, 1), { "grpc-encoding": "gzip" });
    expect(zip.code, zip.message).toBe(16);
    const timeout = await call(envelope(MESSAGE), { "grpc-timeout": "soon" });
    expect(timeout.code, timeout.message).toBe(16);
  });

  it("a gzip message that gunzips and a valid grpc-timeout still work", async () => {
    const zipped = await call(envelope(GZIPPED, 1), { ...auth(), "grpc-encoding": "gzip" });
    expect(zipped.code, zipped.message).toBe(0);
    const timed = await call(envelope(MESSAGE), { ...auth(), "grpc-timeout": "10S" });
    expect(timed.code, timed.message).toBe(0);
  });

  it("the main port answers the same faults INVALID_ARGUMENT too", async () => {
    const zip = await rawGrpc(s.url, PATH, envelope(CUT, 1), {
      ...auth(),
      "grpc-encoding": "gzip",
    });
    expect(zip.code, zip.message).toBe("3");
    const timeout = await rawGrpc(s.url, PATH, envelope(MESSAGE), {
      ...auth(),
      "grpc-timeout": "soon",
    });
    expect(timeout.code, timeout.message).toBe("3");
  });
});

describe("the gRPC wire format", () => {
  it("reads grpc-timeout as 1 to 8 digits and a unit, and nothing else", () => {
    expect(timeoutMs(undefined)).toBeUndefined();
    expect(timeoutMs("10S")).toBe(10_000);
    expect(timeoutMs("500m")).toBe(500);
    expect(timeoutMs("2H")).toBe(7_200_000);
    expect(timeoutMs("99999999n")).toBeCloseTo(99.999999);
    for (const bad of ["", "S", "-1S", "123456789S", "10s", "10 S", "1.5S"]) {
      expect(() => timeoutMs(bad), bad).toThrow(/must be 1 to 8 digits/);
    }
  });

  it("percent-encodes grpc-message as the gRPC protocol does, and only that", () => {
    expect(percentEncoded('body: must be 1 (got "x")')).toBe('body: must be 1 (got "x")');
    expect(percentEncoded("100% é\n")).toBe("100%25 %C3%A9%0A");
  });

  it("reads identity, gzip and deflate, and refuses other encodings UNIMPLEMENTED", () => {
    expect(requestEncoding(undefined)).toBeUndefined();
    expect(requestEncoding("identity")).toBeUndefined();
    expect(requestEncoding("gzip")).toBe("gzip");
    expect(requestEncoding("deflate")).toBe("deflate");
    expect(() => requestEncoding("snappy")).toThrow(WireFault);
    try {
      requestEncoding("snappy");
    } catch (err) {
      expect((err as WireFault).code).toBe(12);
    }
  });

  it("frames messages however the bytes are cut, and refuses a frame over the bound at its prefix", () => {
    const two = Buffer.concat([envelope(new Uint8Array([1, 2, 3])), envelope(new Uint8Array([]))]);
    for (let cut = 0; cut <= two.length; cut++) {
      const reader = new FrameReader(10);
      const got = [...reader.push(two.subarray(0, cut)), ...reader.push(two.subarray(cut))];
      expect(
        got.map((m) => [...m.bytes]),
        `cut at ${cut}`,
      ).toEqual([[1, 2, 3], []]);
      expect(reader.leftover).toBe(0);
    }
    const big = Buffer.alloc(5);
    big.writeUInt32BE(11, 1);
    expect(() => new FrameReader(10).push(big)).toThrow(/at most 10/);
    expect(() => new FrameReader(10).push(Buffer.from([7, 0, 0, 0, 0]))).toThrow(/unknown flag 7/);
  });
});
