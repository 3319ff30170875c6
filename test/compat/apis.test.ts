import { Unkey } from "@unkey/api";
import * as errors from "@unkey/api/models/errors";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, type TestServer } from "../harness/server.js";

// The public system's official SDK, pointed at Latchkey, must work unchanged.
let s: TestServer;
let unkey: Unkey;
beforeAll(async () => {
  s = await startServer();
  unkey = new Unkey({ rootKey: s.rootKey, serverURL: s.url });
});
afterAll(() => s.stop());

describe("@unkey/api 2.5.1 against Latchkey: apis", () => {
  it("creates, gets and deletes an API", async () => {
    const created = await unkey.apis.createApi({ name: "sdk-made" });
    expect(created.meta.requestId).toMatch(/^req_/);
    const apiId = created.data.apiId;
    const got = await unkey.apis.getApi({ apiId });
    expect(got.data).toEqual({ id: apiId, name: "sdk-made" });
    const deleted = await unkey.apis.deleteApi({ apiId });
    expect(deleted.data).toEqual({});
  });

  it("maps a 404 to NotFoundErrorResponse", async () => {
    const err = await unkey.apis.getApi({ apiId: "api_doesnotexist" }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(errors.NotFoundErrorResponse);
    expect((err as errors.NotFoundErrorResponse).data$.error.status).toBe(404);
  });

  it("maps a 400 to BadRequestErrorResponse with the field location", async () => {
    // The SDK validates inputs itself; bypass it with a name it accepts but we bound.
    const err = await unkey.apis.createApi({ name: "x".repeat(300) }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(errors.BadRequestErrorResponse);
    expect((err as errors.BadRequestErrorResponse).data$.error.errors[0]?.location).toBe("/name");
  });

  it("maps a 401 to UnauthorizedErrorResponse", async () => {
    const stranger = new Unkey({ rootKey: "root_notakey", serverURL: s.url });
    const err = await stranger.apis.createApi({ name: "nope" }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(errors.UnauthorizedErrorResponse);
  });

  it("maps a 403 to ForbiddenErrorResponse", async () => {
    const weak = new Unkey({ rootKey: await s.seed.rootKey(["api.*.read_api"]), serverURL: s.url });
    const err = await weak.apis.createApi({ name: "nope" }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(errors.ForbiddenErrorResponse);
    expect((err as errors.ForbiddenErrorResponse).data$.error.detail).toContain("api.*.create_api");
  });
});
