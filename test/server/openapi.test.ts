import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { OPENAPI_DOCUMENT_URL } from "../../src/server/openapi.js";
import { type Procedure, procedures } from "../../src/services/procedures.js";
import { learnIds, withRealIds } from "../harness/example-ids.js";
import { assertDocumentedResponse } from "../harness/openapi.js";
import { useServer } from "../harness/server.js";

const s = useServer();
// biome-ignore lint/suspicious/noExplicitAny: the document is read as plain JSON
const doc: any = JSON.parse(await readFile(OPENAPI_DOCUMENT_URL, "utf8"));
const schemas = doc.components.schemas;

describe("GET /openapi.json", () => {
  it("serves the generated document", async () => {
    const res = await fetch(`${s.url}/openapi.json`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("application/json");
    expect(await res.json()).toEqual(doc);
    expect(doc.openapi).toBe("3.1.0");
  });
});

describe("the OpenAPI document", () => {
  it("has one POST per procedure of the table, and liveness at /v2/liveness by GET and POST", () => {
    const expected = [...Object.keys(procedures).map((p) => `/v2/${p}`), "/v2/liveness"];
    expect(Object.keys(doc.paths).sort()).toEqual(expected.sort());
    expect(Object.keys(doc.paths["/v2/liveness"]).sort()).toEqual(["get", "post"]);
  });

  it("asks for a root key as the procedures table says", () => {
    for (const [name, p] of Object.entries(procedures as Record<string, Procedure>)) {
      const { security, responses } = doc.paths[`/v2/${name}`].post;
      const expected = { none: [], required: [{ rootKey: [] }], optional: [{ rootKey: [] }, {}] };
      expect(security, name).toEqual(expected[p.auth]);
      for (const status of ["400", "413", "415", "500"])
        expect(responses, name).toHaveProperty(status);
      if (p.auth !== "none")
        for (const status of ["401", "403", "503"]) expect(responses, name).toHaveProperty(status);
    }
  });

  it("carries the bounds and JSON behaviour of the proto options", () => {
    const createApi = schemas.CreateApiRequest;
    expect(createApi.required).toEqual(["name"]);
    expect(createApi.additionalProperties).toBe(false);
    expect(createApi.properties.name).toMatchObject({ minLength: 3, maxLength: 256 });
    const updateKey = schemas.UpdateKeyRequest.properties;
    expect(updateKey.expires.type).toEqual(["integer", "null"]);
    expect(updateKey.enabled.type).toBe("boolean");
    expect(updateKey).not.toHaveProperty("updateMask");
    expect(schemas.GetIdentityRequest.oneOf).toEqual([
      { required: ["identity"] },
      { required: ["externalId"] },
    ]);
    expect(schemas.RefillInterval.enum).toEqual(["daily", "monthly"]);
    const multi =
      doc.paths["/v2/ratelimit.multiLimit"].post.requestBody.content["application/json"];
    expect(multi.schema.oneOf[1]).toMatchObject({ type: "array", minItems: 1, maxItems: 100 });
    expect(schemas.Credits.required).toEqual(["remaining"]);
    expect(schemas.ListKeysResponse.required).toEqual(["meta", "data", "pagination"]);
  });
});

describe("the harness check of /v2 answers", () => {
  const meta = { requestId: "req_123" };
  it("accepts an answer the document allows", () => {
    assertDocumentedResponse("apis.getApi", 200, { meta, data: { id: "api_1", name: "x" } });
  });

  it("refuses an undocumented field, a missing field and an undocumented status", () => {
    const api = { id: "api_1", name: "x" };
    expect(() =>
      assertDocumentedResponse("apis.getApi", 200, { meta, data: { ...api, extra: 1 } }),
    ).toThrow(/does not allow/);
    expect(() => assertDocumentedResponse("apis.getApi", 200, { data: api })).toThrow(
      /does not allow/,
    );
    expect(() => assertDocumentedResponse("apis.createApi", 404, { meta })).toThrow(
      /does not list/,
    );
  });

  it("requires errors[] on a 400 and refuses it elsewhere", () => {
    const error = { detail: "d", status: 400, title: "Bad Request", type: "t" };
    expect(() => assertDocumentedResponse("apis.getApi", 400, { meta, error })).toThrow();
    assertDocumentedResponse("apis.getApi", 400, { meta, error: { ...error, errors: [] } });
    expect(() =>
      assertDocumentedResponse("apis.getApi", 404, { meta, error: { ...error, errors: [] } }),
    ).toThrow();
  });
});

/**
 * The operations in the order a first session takes them: what an example names is created
 * by an earlier one, and deleted only at the end.
 */
const SESSION = [
  "apis.createApi",
  "apis.getApi",
  "apis.listApis",
  "permissions.createPermission",
  "permissions.getPermission",
  "permissions.listPermissions",
  "permissions.createRole",
  "permissions.getRole",
  "permissions.listRoles",
  "identities.createIdentity",
  "identities.getIdentity",
  "identities.listIdentities",
  "identities.updateIdentity",
  "webhooks.createEndpoint",
  "keys.createKey",
  "webhooks.listDeliveries",
  "webhooks.redeliver",
  "webhooks.listEndpoints",
  "webhooks.updateEndpoint",
  "webhooks.rotateSecret",
  "keys.verifyKey",
  "keys.settleCredits",
  "keys.whoami",
  "keys.getKey",
  "apis.listKeys",
  "keys.updateKey",
  "keys.updateCredits",
  "keys.addPermissions",
  "keys.removePermissions",
  "keys.setPermissions",
  "permissions.setRolePermissions",
  "keys.addRoles",
  "keys.removeRoles",
  "keys.setRoles",
  "keys.migrateKeys",
  "ratelimit.limit",
  "ratelimit.multiLimit",
  "ratelimit.setOverride",
  "ratelimit.getOverride",
  "ratelimit.listOverrides",
  "analytics.getVerifications",
  "analytics.getCreditUsage",
  "analytics.listAuditLogs",
  "liveness.check",
  "liveness.get",
  "liveness.post",
  "keys.rerollKey",
  "keys.deleteKey",
  "ratelimit.deleteOverride",
  "identities.deleteIdentity",
  "permissions.deleteRole",
  "permissions.deletePermission",
  "apis.updateApi",
  "apis.deleteApi",
  "webhooks.deleteEndpoint",
];

describe("the examples of the OpenAPI document, sent in order to a real server", () => {
  // Object.entries of the plain JSON document gives untyped operations.
  const operations = Object.entries(doc.paths).flatMap(([path, item]) =>
    Object.entries(item as object).map(([method, op]) => ({ path, method, op })),
  );
  const byId = new Map(operations.map((o) => [o.op.operationId as string, o]));

  it("take every operation once", () => {
    expect([...SESSION].sort()).toEqual([...byId.keys()].sort());
  });

  /** Sends the examples of these operations in order; each answer's status, with its detail. */
  async function send(operationIds: readonly string[], rootKey: string): Promise<string[]> {
    const ids = new Map<string, string>();
    const answers: string[] = [];
    for (const operationId of operationIds) {
      const found = byId.get(operationId);
      if (!found) throw new Error(`${operationId} is not an operation of the document`);
      const { path, method, op } = found;
      const example = op.requestBody?.content["application/json"].example;
      const res = await fetch(`${s.url}${path}`, {
        method: method.toUpperCase(),
        headers: { authorization: `Bearer ${rootKey}`, "content-type": "application/json" },
        body: op.requestBody ? JSON.stringify(withRealIds(example, ids)) : undefined,
      });
      const answer = (await res.json()) as { error?: { detail: string } };
      assertDocumentedResponse(path.slice("/v2/".length), res.status, answer);
      answers.push(`${operationId} ${res.status}${res.ok ? "" : ` ${answer.error?.detail}`}`);
      learnIds(op.responses["200"].content["application/json"].example, answer, ids);
    }
    return answers;
  }

  it("each answer 200 with the first root key, the ids of earlier answers put in", async () => {
    expect(await send(SESSION, s.rootKey)).toEqual(SESSION.map((id) => `${id} 200`));
  });

  it("make the quickstart on their own: createApi, createKey, verifyKey", async () => {
    // A workspace of its own, as fresh as a new instance, with a root key that may do anything.
    const rootKey = await s.seed.rootKey(["*.*.*"], await s.seed.workspace());
    const quickstart = ["apis.createApi", "keys.createKey", "keys.verifyKey"];
    expect(await send(quickstart, rootKey)).toEqual(quickstart.map((id) => `${id} 200`));
  });
});
