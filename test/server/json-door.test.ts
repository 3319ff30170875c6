import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, type TestServer } from "../harness/server.js";

let s: TestServer;
let auth: Record<string, string>;
beforeAll(async () => {
  s = await startServer();
  auth = { authorization: `Bearer ${s.rootKey}` };
});
afterAll(() => s.stop());

function post(path: string, body: string, headers: Record<string, string> = {}) {
  return s.raw(path, {
    method: "POST",
    headers: { "content-type": "application/json", ...auth, ...headers },
    body,
  });
}

function expectEnvelope(res: Awaited<ReturnType<TestServer["raw"]>>, status: number, code: string) {
  expect(res.status).toBe(status);
  expect(res.headers.get("content-type")).toBe("application/json");
  expect(res.body.meta.requestId).toMatch(/^req_[a-zA-Z0-9]+$/);
  expect(res.headers.get("x-request-id")).toBe(res.body.meta.requestId);
  expect(res.body.error.status).toBe(status);
  const [, category, name] = code.split(":").slice(1);
  // Without DOCS_URL: a relative reference to this server's error page.
  expect(res.body.error.type).toBe(`/api-reference/errors-v2/svc/${category}/${name}`);
}

describe("the /v2 JSON door", () => {
  describe("transport rules", () => {
    it("answers a non-JSON content type with 415", async () => {
      const res = await post("/v2/apis.createApi", '{"name":"abc"}', {
        "content-type": "text/plain",
      });
      expectEnvelope(res, 415, "err:svc:bad_request:unsupported_media_type");
      expect(res.body.error.title).toBe("Unsupported Media Type");
    });

    it("accepts application/json with a charset", async () => {
      const res = await post("/v2/apis.createApi", '{"name":"abc"}', {
        "content-type": "application/json; charset=utf-8",
      });
      expect(res.status).toBe(200);
    });

    it("answers a body over 1 MiB with 413 and the errors array", async () => {
      const body = JSON.stringify({ name: "x".repeat(1024 * 1024) });
      const res = await post("/v2/apis.createApi", body);
      expectEnvelope(res, 413, "err:svc:bad_request:request_body_too_large");
      expect(res.body.error.errors).toEqual([]);
    });

    it("answers a body over 1 MiB sent without Content-Length (chunked) with 413", async () => {
      const chunk = new TextEncoder().encode(`{"name":"${"x".repeat(600 * 1024)}`);
      const stream = new ReadableStream<Uint8Array>({
        start(c) {
          c.enqueue(chunk);
          c.enqueue(chunk);
          c.enqueue(new TextEncoder().encode('"}'));
          c.close();
        },
      });
      const res = await fetch(`${s.url}/v2/apis.createApi`, {
        method: "POST",
        headers: { "content-type": "application/json", ...auth },
        body: stream,
        duplex: "half",
      } as RequestInit);
      expect(res.status).toBe(413);
    });

    it.each(["GET", "PUT", "DELETE", "PATCH"])(
      "answers %s with 405 and Allow: POST",
      async (method) => {
        const res = await s.raw("/v2/apis.createApi", { method });
        expectEnvelope(res, 405, "err:svc:application:method_not_allowed");
        expect(res.headers.get("allow")).toBe("POST");
      },
    );

    it.each([
      "/v2/apis.nope",
      "/v2/nope.createApi",
      "/v2/apis.CreateApi",
      "/v2/",
      "/elsewhere",
      "/",
    ])("answers the unknown path %s with 404", async (path) => {
      const res = await post(path, "{}");
      expectEnvelope(res, 404, "err:svc:application:route_not_found");
    });

    it("serves liveness by GET and POST without authentication", async () => {
      for (const res of [
        await s.raw("/v2/liveness"),
        await s.raw("/v2/liveness", {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: "{}",
        }),
        await s.raw("/v2/liveness", {
          method: "POST",
          headers: { "content-type": "application/json", authorization: "Bearer nonsense" },
          body: "{}",
        }),
      ]) {
        expect(res.status).toBe(200);
        expect(res.body.data.message).toBeTypeOf("string");
        expect(res.headers.get("x-request-id")).toBe(res.body.meta.requestId);
      }
    });

    it("answers broken JSON with 400", async () => {
      const res = await post("/v2/apis.createApi", '{"name":');
      expectEnvelope(res, 400, "err:svc:application:invalid_input");
      expect(res.body.error.errors[0].location).toBe("");
    });

    it.each([
      ["an array", "[1]"],
      ["a string", '"x"'],
      ["null", "null"],
      ["an empty body", ""],
    ])("answers %s as the body with 400", async (_, body) => {
      expect((await post("/v2/apis.createApi", body)).status).toBe(400);
    });

    it("gives every response a unique request id", async () => {
      const ids = new Set<string>();
      for (let i = 0; i < 20; i++)
        ids.add((await post("/v2/apis.getApi", '{"apiId":"api_x"}')).body.meta.requestId);
      expect(ids.size).toBe(20);
    });
  });

  describe("body rules", () => {
    it.each([
      ["an unknown field", '{"name":"abc","color":"red"}', "/color", /unknown field/],
      ["a snake_case name", '{"api_id":"api_x"}', "/api_id", /use 'apiId'/, "/v2/apis.getApi"],
      ["an updateMask", '{"name":"abc","updateMask":"name"}', "/updateMask", /unknown field/],
      ["null on a non-nullable field", '{"name":null}', "/name", /must not be null/],
      ["a number where a string belongs", '{"name":123}', "/name", /must be a string/],
      // Binary protobuf cannot tell an omitted number from 0; the /v2 door can, and requires it.
      [
        "an omitted required number",
        '{"keyId":"key_x"}',
        "/expiration",
        /^is required$/,
        "/v2/keys.rerollKey",
      ],
      [
        "an omitted required number in a list item",
        '{"externalId":"x","ratelimits":[{"name":"requests","limit":1}]}',
        "/ratelimits/0/duration",
        /^is required$/,
        "/v2/identities.createIdentity",
      ],
      [
        "an int64 sent as a string",
        '{"keyId":"key_x","expiration":"60000"}',
        "/expiration",
        /must be a JSON number, not a string/,
        "/v2/keys.rerollKey",
      ],
      [
        "a fraction where an integer belongs",
        '{"limit":1.5}',
        "/limit",
        /must be an integer/,
        "/v2/apis.listApis",
      ],
      [
        "an enum value the spec does not name",
        '{"keyId":"key_x","operation":"double","value":1}',
        "/operation",
        /must be one of: set, increment, decrement/,
        "/v2/keys.updateCredits",
      ],
    ])(
      "answers %s with 400 naming the field",
      async (_, body, location, message, path = "/v2/apis.createApi") => {
        const before = await s.snapshot();
        const res = await post(path, body);
        expectEnvelope(res, 400, "err:svc:application:invalid_input");
        expect(res.body.error.errors).toEqual([
          { location, message: expect.stringMatching(message) },
        ]);
        expect(await s.changesSince(before)).toEqual({});
      },
    );

    it("reports every violation, not only the first", async () => {
      const res = await post("/v2/apis.createApi", '{"nme":"abc","extra":1}');
      expect(res.body.error.errors.map((e: { location: string }) => e.location)).toEqual([
        "/nme",
        "/extra",
      ]);
    });

    it("authenticates before it reports body problems", async () => {
      const res = await post("/v2/apis.createApi", '{"color":"red"}', {
        authorization: "Bearer nope",
      });
      expect(res.status).toBe(401);
    });
  });
});

describe("error type URLs", () => {
  it("use DOCS_URL when it is set", async () => {
    const other = await startServer({ config: { docsUrl: "https://docs.example.com" } });
    try {
      const res = await other.call("json", "apis.getApi", { apiId: "api_none" });
      expect(res.error?.type).toBe(
        "https://docs.example.com/api-reference/errors-v2/svc/data/api_not_found",
      );
    } finally {
      await other.stop();
    }
  });
});
