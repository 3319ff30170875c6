import { invalid, ok, type Row, refused } from "../row.js";

const COUNT = "select outcome, count(*)::int as n from key_verifications_v1 group by outcome";
/** The months of this year and the next: the statement's range, whenever the test runs. */
const thisYear = new Date().getUTCFullYear();
const MONTHS = { start: Date.UTC(thisYear, 0, 1), end: Date.UTC(thisYear + 2, 0, 1) };

export const ANALYTICS_ROWS: Row[] = [
  ok("analytics.getVerifications", "counts the workspace's verifications", async (g) => {
    const apiId = await g.api();
    const { key } = await g.key(apiId);
    await g.call("keys.verifyKey", { key });
    await g.call("keys.verifyKey", { key: `${key}x` });
    await g.flushEvents();
    return { body: { query: COUNT } };
  }),
  refused(
    "analytics.getVerifications",
    "a statement that is not a SELECT",
    400,
    "err:svc:bad_request:invalid_analytics_query_type",
    async () => ({ body: { query: "delete from key_verifications_v1" } }),
  ),
  refused(
    "analytics.getVerifications",
    "a table that is not a virtual table",
    400,
    "err:svc:bad_request:invalid_analytics_table",
    async () => ({ body: { query: "select * from keys" } }),
  ),
  refused(
    "analytics.getVerifications",
    "a key that may not read analytics",
    403,
    "err:svc:authorization:insufficient_permissions",
    async (g) => ({ body: { query: COUNT }, auth: await g.rootKeyWith(["api.*.read_api"]) }),
  ),

  ok("analytics.getCreditUsage", "a key's statement by month", async (g) => {
    const { key, keyId } = await g.key(await g.api(), { credits: { remaining: 10 } });
    await g.call("keys.verifyKey", { key, credits: { cost: 3 } });
    await g.flushEvents();
    return { body: { keyId, ...MONTHS, granularity: "month" } };
  }),
  invalid("analytics.getCreditUsage", "an end before the start", ["/end"], async (g) => ({
    body: { keyId: (await g.key(await g.api())).keyId, start: 10, end: 5, granularity: "day" },
  })),
  refused(
    "analytics.getCreditUsage",
    "an unknown key",
    404,
    "err:svc:data:key_not_found",
    async () => ({
      body: { keyId: "key_0000000000000000", ...MONTHS, granularity: "month" },
    }),
  ),
  refused(
    "analytics.getCreditUsage",
    "an identity's statement without the workspace-wide grant",
    403,
    "err:svc:authorization:insufficient_permissions",
    async (g) => {
      await g.identity("statement_owner");
      return {
        body: { externalId: "statement_owner", ...MONTHS, granularity: "month" },
        auth: await g.rootKeyWith(["api.*.read_api"]),
      };
    },
  ),

  ok("analytics.listAuditLogs", "the workspace's changes, newest first", async (g) => {
    const { apiId } = await g.call("apis.createApi", { name: "audited" });
    g.know("api", apiId);
    await g.call("keys.createKey", { apiId, name: "audited key" });
    return { body: { limit: 3 } };
  }),
  invalid("analytics.listAuditLogs", "a negative start", ["/start"], async () => ({
    body: { start: -1 },
  })),
  refused(
    "analytics.listAuditLogs",
    "a key that may not read the audit log",
    403,
    "err:svc:authorization:insufficient_permissions",
    async (g) => ({ body: {}, auth: await g.rootKeyWith(["api.*.read_api"]) }),
  ),
];
