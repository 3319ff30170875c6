import { Code, ConnectError, createClient } from "@connectrpc/connect";
import {
  createConnectTransport,
  createGrpcTransport,
  createGrpcWebTransport,
} from "@connectrpc/connect-node";
import { describe, expect, it } from "vitest";
import { ApisService } from "../../gen/latchkey/v2/apis_pb.js";
import { ErrorDetailSchema } from "../../gen/latchkey/v2/common_pb.js";
import { useServer } from "../harness/server.js";

const s = useServer();

describe("Connect, gRPC and gRPC-web at their standard paths", () => {
  it("serves gRPC-web as well", async () => {
    const res = await s.call("grpc-web", "apis.createApi", { name: "web" });
    expect(res.status).toBe(200);
    expect(res.data.apiId).toMatch(/^api_/);
  });

  it("serves Connect over HTTP/2 on the same port", async () => {
    const client = createClient(
      ApisService,
      createConnectTransport({ baseUrl: s.url, httpVersion: "2" }),
    );
    const res = await client.createApi(
      { name: "via h2" },
      { headers: { authorization: `Bearer ${s.rootKey}` } },
    );
    expect(res.data?.apiId).toMatch(/^api_/);
    expect(res.meta?.requestId).toMatch(/^req_/);
  });

  it("rejects unknown fields in Connect JSON", async () => {
    const res = await fetch(`${s.url}/latchkey.v2.ApisService/CreateApi`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${s.rootKey}` },
      body: JSON.stringify({ name: "abc", color: "red" }),
    });
    expect(res.status).toBe(400);
  });

  it("answers a Connect body over 1 MiB with 413", async () => {
    const res = await fetch(`${s.url}/latchkey.v2.ApisService/CreateApi`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${s.rootKey}` },
      body: JSON.stringify({ name: "x".repeat(1024 * 1024) }),
    });
    expect(res.status).toBe(413);
    expect(((await res.json()) as { code: string }).code).toBe("resource_exhausted");
  });

  it("serves gRPC through Connect on the main port too", async () => {
    const res = await s.call("grpc-main", "apis.createApi", { name: "main port" });
    expect(res.status).toBe(200);
    expect((await s.call("grpc-main", "apis.getApi", { apiId: "api_none" })).error?.code).toBe(
      "err:svc:data:api_not_found",
    );
  });

  it.each([
    [
      "gRPC (the gRPC port)",
      () => createGrpcTransport({ baseUrl: `http://127.0.0.1:${s.app.grpcPort}` }),
    ],
    ["gRPC", () => createGrpcTransport({ baseUrl: s.url })],
    ["gRPC-web", () => createGrpcWebTransport({ baseUrl: s.url, httpVersion: "1.1" })],
  ])("answers a %s message over 1 MiB with resource_exhausted", async (_, transport) => {
    const client = createClient(ApisService, transport());
    const err = await client
      .createApi(
        { name: "x".repeat(1024 * 1024 + 10) },
        { headers: { authorization: `Bearer ${s.rootKey}` } },
      )
      .then(
        () => undefined,
        (e: unknown) => ConnectError.from(e),
      );
    expect(err?.code).toBe(Code.ResourceExhausted);
  });

  it("carries the catalog entry as a typed ErrorDetail and x-request-id in the metadata", async () => {
    const client = createClient(ApisService, createGrpcTransport({ baseUrl: s.url }));
    const err = await client
      .getApi({ apiId: "api_nope" }, { headers: { authorization: `Bearer ${s.rootKey}` } })
      .then(
        () => undefined,
        (e: unknown) => ConnectError.from(e),
      );
    expect(err?.code).toBe(Code.NotFound);
    const detail = err?.findDetails(ErrorDetailSchema)[0];
    expect(detail).toMatchObject({
      code: "err:svc:data:api_not_found",
      status: 404,
      title: "Not Found",
    });
    expect(detail?.requestId).toMatch(/^req_/);
    expect(err?.metadata.get("x-request-id")).toBe(detail?.requestId);
  });

  it("maps each error class to its Connect code", async () => {
    const client = createClient(ApisService, createGrpcTransport({ baseUrl: s.url }));
    const codeOf = (p: Promise<unknown>) =>
      p.then(
        () => Code.Unknown,
        (e: unknown) => ConnectError.from(e).code,
      );
    expect(await codeOf(client.createApi({ name: "ok name" }))).toBe(Code.Unauthenticated);
    const weak = await s.seed.rootKey(["api.*.read_api"]);
    expect(
      await codeOf(
        client.createApi({ name: "ok name" }, { headers: { authorization: `Bearer ${weak}` } }),
      ),
    ).toBe(Code.PermissionDenied);
    expect(
      await codeOf(
        client.createApi({ name: "x" }, { headers: { authorization: `Bearer ${s.rootKey}` } }),
      ),
    ).toBe(Code.InvalidArgument);
  });
});
