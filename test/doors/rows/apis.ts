import { CODES, invalid, ok, type Row, refused } from "../row.js";

export const API_ROWS: Row[] = [
  ok("apis.createApi", "creates an API", async () => ({ body: { name: "made by the call" } })),
  ok("apis.createApi", "an API with network ranges", async () => ({
    body: { name: "networked", allowedCidrs: ["10.0.0.0/8", "2001:db8::/32"] },
  })),
  invalid(
    "apis.createApi",
    "a network range past its family's width",
    ["/allowedCidrs/1"],
    async () => ({
      body: { name: "badly networked", allowedCidrs: ["10.0.0.0/8", "10.0.0.0/40"] },
    }),
  ),
  invalid("apis.createApi", "a name under 3 characters", ["/name"], async () => ({
    body: { name: "ab" },
  })),
  refused("apis.createApi", "a key that may only read", 403, CODES.forbidden, async (g) => ({
    body: { name: "not made" },
    auth: await g.rootKeyWith(["api.*.read_api"]),
  })),

  ok("apis.getApi", "reads an API", async (g) => ({ body: { apiId: await g.api("read me") } })),
  // Authentication is the same code on every procedure (test/procedures/authentication.test.ts
  // runs it for each); one procedure shows that the doors render its refusals alike.
  refused("apis.getApi", "no root key", 401, "err:svc:authentication:missing", async (g) => ({
    body: { apiId: await g.api() },
    auth: null,
  })),
  refused(
    "apis.getApi",
    "an unknown root key",
    401,
    "err:svc:authentication:key_not_found",
    async (g) => ({ body: { apiId: await g.api() }, auth: "root_unknownKeyThatDoesNotExist" }),
  ),
  refused("apis.getApi", "an unknown API", 404, CODES.apiNotFound, async () => ({
    body: { apiId: "api_unknown" },
  })),
  refused("apis.getApi", "a key granted another API", 403, CODES.forbidden, async (g) => {
    const other = await g.api("granted");
    const apiId = await g.api("not granted");
    return { body: { apiId }, auth: await g.rootKeyWith([`api.${other}.read_api`]) };
  }),

  ok("apis.updateApi", "changes every setting", async (g) => ({
    body: {
      apiId: await g.api("before"),
      name: "after",
      keyFormat: "plain",
      leakPolicy: "revoke",
      allowedCidrs: ["10.0.0.0/8", "2001:db8::/32"],
    },
  })),
  ok("apis.updateApi", "removes the network ranges with null", async (g) => {
    const apiId = await g.api();
    await g.call("apis.updateApi", { apiId, allowedCidrs: ["192.0.2.0/24"] });
    return { body: { apiId, allowedCidrs: null } };
  }),
  invalid(
    "apis.updateApi",
    "a short name and a range with host bits",
    ["/name", "/allowedCidrs/0"],
    async (g) => ({ body: { apiId: await g.api(), name: "ab", allowedCidrs: ["10.0.0.1/8"] } }),
  ),
  refused("apis.updateApi", "an API deleted before", 404, CODES.apiNotFound, async (g) => {
    const apiId = await g.api();
    await g.call("apis.deleteApi", { apiId });
    return { body: { apiId, name: "too late" } };
  }),
  refused("apis.updateApi", "a key that may only read it", 403, CODES.forbidden, async (g) => {
    const apiId = await g.api();
    return {
      body: { apiId, leakPolicy: "notify" },
      auth: await g.rootKeyWith([`api.${apiId}.read_api`]),
    };
  }),

  ok("apis.deleteApi", "deletes an API", async (g) => ({ body: { apiId: await g.api() } })),
  refused("apis.deleteApi", "an API deleted before", 404, CODES.apiNotFound, async (g) => {
    const apiId = await g.api();
    await g.call("apis.deleteApi", { apiId });
    return { body: { apiId } };
  }),

  ok("apis.listApis", "a first page of two of three APIs", async (g) => {
    for (const name of ["first", "second", "third"]) await g.api(name);
    return { body: { limit: 2 } };
  }),
  ok("apis.listApis", "the only API, on the last page", async (g) => {
    await g.api("json api");
    return { body: {} };
  }),
  ok("apis.listApis", "only the APIs a per-API key may read", async (g) => {
    await g.api("hidden");
    const readable = await g.api("readable");
    return { body: {}, auth: await g.rootKeyWith([`api.${readable}.read_api`]) };
  }),
  invalid("apis.listApis", "a page size of 0", ["/limit"], async () => ({ body: { limit: 0 } })),
  refused("apis.listApis", "a key that may read no API", 403, CODES.forbidden, async (g) => ({
    body: {},
    auth: await g.rootKeyWith(["api.*.create_api"]),
  })),

  ok("apis.listKeys", "the keys of an identity", async (g) => {
    const apiId = await g.api();
    await g.key(apiId, { name: "someone else's" });
    await g.key(apiId, { name: "alice's", externalId: "alice", meta: { plan: "pro" } });
    return { body: { apiId, externalId: "alice" } };
  }),
  refused("apis.listKeys", "secrets asked for", 412, CODES.precondition, async (g) => ({
    body: { apiId: await g.api(), decrypt: true },
  })),
  refused("apis.listKeys", "an unknown API", 404, CODES.apiNotFound, async () => ({
    body: { apiId: "api_unknown" },
  })),
];
