import type { JsonObject } from "@bufbuild/protobuf";
import { beforeAll, describe, expect, it } from "vitest";
import { useServer } from "../../../harness/server.js";

// analytics.getVerifications: runs a read-only SQL query over the caller's workspace's
// verification and rate-limit analytics (rollups and raw tables), limited to the APIs the
// root key may read, and answers its rows as JSON objects. These tests read what the queries
// answer; refusals.test.ts holds what it refuses, query-language.test.ts and
// query-functions.test.ts every construct the documentation allows.

const s = useServer();

const PER_DAY = `select date_trunc('day', time) as day, outcome, sum(count)::int as n
  from key_verifications_per_day_v1
  where api_id = '%API%' and time >= now() - interval '30 days'
  group by 1, 2 order by 1, 2`;
const TOP_IDENTITIES = `select external_id, sum(count)::int as total
  from key_verifications_per_month_v1
  where time >= date_trunc('month', now()) and external_id is not null
  group by external_id order by total desc limit 10`;

let apiA: string;
let apiB: string;
let foreignRootKey: string;

/** What a test verification adds to the key: tags, a permissions query, the key's API. */
interface VerifyOptions {
  tags?: string[];
  permissions?: string;
  apiId?: string;
}

/** Verifies a key without a root key. */
async function verify(key: string, body: VerifyOptions = {}) {
  const res = await s.as(null).keys.verifyKey({ key, ...body });
  expect(res.data?.keyId).toBeDefined();
}

beforeAll(async () => {
  const a1 = await s.seed.key({ externalId: "alice", permissions: ["docs.read"] });
  apiA = a1.apiId;
  const a2 = await s.seed.key({ apiId: apiA, externalId: "bob" });
  const b1 = await s.seed.key({ externalId: "bob" });
  apiB = b1.apiId;
  for (let i = 0; i < 3; i++) await verify(a1.key, { tags: ["path=/a"] });
  await verify(a1.key, { permissions: "docs.write" });
  await verify(a2.key);
  for (let i = 0; i < 2; i++) await verify(b1.key);
  await s.api.ratelimit.limit({
    namespace: "analytics.ns",
    identifier: "u",
    limit: 1n,
    duration: 60_000n,
  });
  // Another workspace with verifications of its own.
  const ws = await s.seed.workspace();
  foreignRootKey = await s.seed.rootKey(["*.*.*"], ws);
  const foreign = await s.seed.key({ apiId: await s.seed.api(ws) }, foreignRootKey);
  // Two workspaces now: a verification without a root key names the key's API.
  for (let i = 0; i < 5; i++) await verify(foreign.key, { apiId: foreign.apiId });
  await s.app.deps.events.flush();
});

/** The rows a query answers, as the all-powerful root key unless `rootKey` is given. */
async function rows(query: string, rootKey?: string): Promise<JsonObject[]> {
  const api = rootKey === undefined ? s.api : s.as(rootKey);
  return (await api.analytics.getVerifications({ query })).data;
}

describe("analytics.getVerifications", () => {
  it("answers verifications per outcome per day for one API", async () => {
    const today = new Date(s.clock.now()).toISOString().slice(0, 10);
    expect(await rows(PER_DAY.replace("%API%", apiA))).toEqual([
      { day: `${today}T00:00:00+00:00`, outcome: "INSUFFICIENT_PERMISSIONS", n: 1 },
      { day: `${today}T00:00:00+00:00`, outcome: "VALID", n: 4 },
    ]);
  });

  it("answers the top identities by usage this month", async () => {
    expect(await rows(TOP_IDENTITIES)).toEqual([
      { external_id: "alice", total: 4 },
      { external_id: "bob", total: 3 },
    ]);
  });

  it("sees only its own workspace", async () => {
    const sql = "select sum(count)::int as n from key_verifications_per_hour_v1";
    expect(await rows(sql)).toEqual([{ n: 7 }]);
    expect(await rows(sql, foreignRootKey)).toEqual([{ n: 5 }]);
  });

  it("keeps every rollup in step with the others", async () => {
    for (const g of ["minute", "hour", "day", "month"]) {
      const sql = `select sum(count)::int as n, sum(spent_credits)::int as spent from key_verifications_per_${g}_v1`;
      expect(await rows(sql), g).toEqual([{ n: 7, spent: 0 }]);
    }
  });

  it("limits an API-scoped root key to its APIs' rows and to no rate-limit rows", async () => {
    const scoped = await s.seed.rootKey([`api.${apiB}.read_analytics`]);
    const sql =
      "select api_id, sum(count)::int as n from key_verifications_per_day_v1 group by api_id";
    expect(await rows(sql, scoped)).toEqual([{ api_id: apiB, n: 2 }]);
    expect(await rows("select count(*)::int as n from ratelimits_v1", scoped)).toEqual([{ n: 0 }]);
  });

  it("answers an empty list when nothing matches", async () => {
    const sql = "select * from key_verifications_per_day_v1 where outcome = 'NOT_A_THING'";
    expect(await rows(sql)).toEqual([]);
  });

  it("reads raw verifications with their tags and times", async () => {
    const sql = `select outcome, tags, spent_credits from key_verifications_v1
       where api_id = '${apiA}' and 'path=/a' = any (tags)`;
    expect(await rows(sql)).toEqual(
      Array.from({ length: 3 }, () => ({ outcome: "VALID", tags: ["path=/a"], spent_credits: 0 })),
    );
  });

  it("reads rate-limit decisions from ratelimits_v1", async () => {
    const sql = `select identifier, passed, "limit", duration from ratelimits_v1`;
    expect(await rows(sql)).toEqual([
      { identifier: "u", passed: true, limit: 1, duration: 60_000 },
    ]);
  });
});
