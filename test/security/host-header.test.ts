import { request } from "node:http";
import * as grpc from "@grpc/grpc-js";
import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../src/config.js";
import { useServer } from "../harness/server.js";

const s = useServer();
const EVIL = "evil.example";

/** A raw HTTP/1.1 request with the Host header of our choosing; the answer's headers and body. */
function send(
  path: string,
  init: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<{ status: number; raw: string; body: string }> {
  const url = new URL(s.url);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: url.hostname,
        port: url.port,
        path,
        method: init.method ?? "GET",
        headers: { host: EVIL, ...init.headers },
      },
      (res) => {
        let body = "";
        res.setEncoding("utf8");
        res.on("data", (c: string) => {
          body += c;
        });
        res.on("end", () => {
          const raw = `${JSON.stringify(res.headers)}\n${body}`;
          resolve({ status: res.statusCode ?? 0, raw, body });
        });
      },
    );
    req.on("error", reject);
    req.end(init.body);
  });
}

const json = { "content-type": "application/json" };

describe("error type URLs", () => {
  it("never echo the Host header: a request for evil.example sees no evil.example", async () => {
    const auth = { authorization: `Bearer ${s.rootKey}` };
    const answers = [
      // The /v2 door: a 404, a 401, a 400 and an unknown route.
      await send("/v2/apis.getApi", {
        method: "POST",
        headers: { ...json, ...auth },
        body: '{"apiId":"api_missing000000"}',
      }),
      await send("/v2/apis.getApi", { method: "POST", headers: json, body: "{}" }),
      await send("/v2/apis.createApi", {
        method: "POST",
        headers: { ...json, ...auth },
        body: '{"name":""}',
      }),
      await send("/v2/nothing.here", { method: "POST", headers: json, body: "{}" }),
      // Connect JSON on the main port.
      await send("/latchkey.v2.ApisService/GetApi", {
        method: "POST",
        headers: { ...json, ...auth },
        body: '{"apiId":"api_missing000000"}',
      }),
      // The pages.
      await send("/docs"),
      await send("/openapi.json"),
      await send("/api-reference/errors-v2"),
    ];
    for (const a of answers) expect(a.raw).not.toContain(EVIL);
    // Not vacuous: errors carry a type, relative to this server without DOCS_URL.
    const notFound = JSON.parse(answers[0]?.body ?? "{}");
    expect(notFound.error.type).toBe("/api-reference/errors-v2/svc/data/api_not_found");
    expect(answers[4]?.raw).toContain("/api-reference/errors-v2/svc/data/api_not_found");
  });

  it("never echo the :authority of a gRPC call", async () => {
    const client = new grpc.Client(
      `127.0.0.1:${s.app.grpcPort}`,
      grpc.credentials.createInsecure(),
      { "grpc.default_authority": EVIL },
    );
    try {
      const metadata = new grpc.Metadata();
      metadata.set("authorization", `Bearer ${s.rootKey}`);
      // GetApiRequest { api_id = "api_missing000000" }: field 1, length-delimited.
      const id = Buffer.from("api_missing000000");
      const body = Buffer.concat([Buffer.from([0x0a, id.length]), id]);
      const err = await new Promise<grpc.ServiceError>((resolve, reject) => {
        client.makeUnaryRequest(
          "/latchkey.v2.ApisService/GetApi",
          (b: Buffer) => b,
          (b: Buffer) => b,
          body,
          metadata,
          (e) => (e ? resolve(e) : reject(new Error("expected an error"))),
        );
      });
      expect(err.code).toBe(grpc.status.NOT_FOUND);
      const trailers = err.metadata.getMap();
      const text = Object.values(trailers)
        .map((v) => (Buffer.isBuffer(v) ? v.toString("latin1") : String(v)))
        .join("\n");
      // Not vacuous: the typed error detail is there, with its relative type.
      expect(text).toContain("/api-reference/errors-v2/svc/data/api_not_found");
      expect(`${text}\n${err.details}`).not.toContain(EVIL);
    } finally {
      client.close();
    }
  });

  it("come from DOCS_URL, which must be an absolute http(s) URL", () => {
    expect(loadConfig({ DOCS_URL: "https://docs.example.com/" }).docsUrl).toBe(
      "https://docs.example.com",
    );
    expect(loadConfig({}).docsUrl).toBeUndefined();
    for (const bad of ["docs.example.com", "/docs", "javascript:alert(1)", "https://x/?a=1"]) {
      expect(() => loadConfig({ DOCS_URL: bad }), bad).toThrow(ConfigError);
    }
  });
});
