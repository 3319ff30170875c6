import { Unkey } from "@unkey/api";
import * as errors from "@unkey/api/models/errors";
import { beforeAll, describe, expect, it } from "vitest";
import { useServer } from "../harness/server.js";

const s = useServer();
let unkey: Unkey;
let apiId: string;

beforeAll(async () => {
  unkey = new Unkey({ rootKey: s.rootKey, serverURL: s.url });
  const k = await s.seed.key({ externalId: "sdk-user" });
  apiId = k.apiId;
  for (let i = 0; i < 3; i++) await unkey.keys.verifyKey({ key: k.key });
  await s.app.deps.events.flush();
});

describe("@unkey/api 2.5.1 against Latchkey: analytics", () => {
  it("answers verifications per outcome per day for an API (PostgreSQL dialect)", async () => {
    const res = await unkey.analytics.getVerifications({
      query: `select date_trunc('day', time) as day, outcome, sum(count)::int as n
              from key_verifications_per_day_v1
              where api_id = '${apiId}' and time >= now() - interval '30 days'
              group by 1, 2`,
    });
    expect(res.data).toEqual([
      { day: expect.stringMatching(/T00:00:00\+00:00$/), outcome: "VALID", n: 3 },
    ]);
  });

  it("answers the top identities by usage this month", async () => {
    const res = await unkey.analytics.getVerifications({
      query: `select external_id, sum(count)::int as total from key_verifications_per_month_v1
              where time >= date_trunc('month', now()) and external_id is not null
              group by external_id order by total desc limit 10`,
    });
    expect(res.data).toEqual([{ external_id: "sdk-user", total: 3 }]);
  });

  it("surfaces a refused query as the SDK's BadRequest error", async () => {
    const err = await unkey.analytics
      .getVerifications({ query: "select * from pg_authid" })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(errors.BadRequestErrorResponse);
  });
});
