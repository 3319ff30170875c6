import type { MessageInitShape } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import type { LimitRequestSchema } from "../../../gen/latchkey/v2/ratelimit_pb.js";
import { useServer } from "../../harness/server.js";
import { refusal } from "../../harness/typed.js";

// ratelimit.limit: takes `cost` tokens (default 1) from one identifier's counter in a fixed
// window of a namespace, creating the namespace on first use; answers 200 whether it passed
// or not, and records the decision for analytics.

const s = useServer();
let n = 0;
const HOUR = 3_600_000n;

type Limit = MessageInitShape<typeof LimitRequestSchema>;

describe("ratelimit.limit", () => {
  it("admits up to the limit in a fixed window, reports remaining and reset, and resets", async () => {
    s.clock.set(Date.parse("2026-10-01T10:15:00Z"));
    const body = {
      namespace: `api.requests.${++n}`,
      identifier: "user_1",
      limit: 3n,
      duration: HOUR,
    };
    const answers = [];
    for (let i = 0; i < 4; i++) answers.push((await s.api.ratelimit.limit(body)).data);
    expect(answers.map((a) => [a?.success, a?.remaining, a?.limit])).toEqual([
      [true, 2n, 3n],
      [true, 1n, 3n],
      [true, 0n, 3n],
      [false, 0n, 3n],
    ]);
    expect(answers[0]?.reset).toBe(BigInt(Date.parse("2026-10-01T11:00:00Z")));
    expect(answers[0]?.overrideId).toBeUndefined();
    const other = await s.api.ratelimit.limit({ ...body, identifier: "user_2" });
    expect(other.data?.success).toBe(true);
    s.clock.set(Date.parse("2026-10-01T11:00:00Z"));
    expect((await s.api.ratelimit.limit(body)).data).toMatchObject({
      success: true,
      remaining: 2n,
    });
  });

  it("takes the cost given; cost 0 checks without taking", async () => {
    const body = { namespace: `cost.${++n}`, identifier: "u", limit: 10n, duration: HOUR };
    const limit = async (cost: bigint) => (await s.api.ratelimit.limit({ ...body, cost })).data;
    expect((await limit(7n))?.remaining).toBe(3n);
    expect(await limit(0n)).toMatchObject({ success: true, remaining: 3n });
    expect(await limit(4n)).toMatchObject({ success: false, remaining: 0n });
    expect(await limit(3n)).toMatchObject({ success: true, remaining: 0n });
  });

  it("creates the namespace on first use (ratelimit.*.limit), then finds it by name or id", async () => {
    const ns = `created.${++n}`;
    const body = { namespace: ns, identifier: "u", limit: 5n, duration: HOUR };
    const weak = await s.seed.rootKey(["ratelimit.rlns_other.limit"]);
    const denied = await refusal(s.as(weak).ratelimit.limit({ ...body, limit: 1n }));
    expect(denied.code).toBe(Code.PermissionDenied);
    expect(denied).toMatchObject({
      status: 403,
      errorCode: "err:svc:authorization:insufficient_permissions",
    });
    expect(denied.detail).toContain("ratelimit.*.limit");
    expect(await s.db.query("select 1 from ratelimit_namespaces where name = $1", [ns])).toEqual(
      [],
    );

    expect((await s.api.ratelimit.limit(body)).data?.remaining).toBe(4n);
    const rows = await s.db.query<{ id: string }>(
      "select id from ratelimit_namespaces where name = $1",
      [ns],
    );
    const id = rows[0]?.id as string;
    expect(id).toMatch(/^rlns_/);
    const byId = await s.api.ratelimit.limit({ ...body, namespace: id });
    expect(byId.data?.remaining).toBe(3n);
    const scoped = await s.seed.rootKey([`ratelimit.${id}.limit`]);
    expect((await s.as(scoped).ratelimit.limit(body)).data?.remaining).toBe(2n);
    const audit = await s.db.query<{ event: string }>(
      "select event from audit_logs where resource_id = $1",
      [id],
    );
    expect(audit).toEqual([{ event: "ratelimitNamespace.create" }]);
  });

  it("applies the identifier's override (exact, else the most specific pattern) and names it", async () => {
    const namespace = `override.${++n}`;
    const body = { namespace, identifier: "vip", limit: 1n, duration: 1000n };
    await s.api.ratelimit.limit({ ...body, cost: 0n });
    const override = async (identifier: string, limit: bigint) =>
      (await s.api.ratelimit.setOverride({ namespace, identifier, limit, duration: HOUR })).data
        ?.overrideId;
    const vip = await override("vip", 5n);
    const blocked = await override("user_bad*", 0n);
    await override("user_*", 10n);
    s.clock.set(Date.parse("2026-10-02T10:15:30Z"));
    const first = await s.api.ratelimit.limit(body);
    expect(first.data).toMatchObject({ success: true, limit: 5n, remaining: 4n, overrideId: vip });
    // The override's window (an hour), not the request's second.
    expect(first.data?.reset).toBe(BigInt(Date.parse("2026-10-02T11:00:00Z")));
    // A limit of 0 denies even a cost of 0.
    const denied = await s.api.ratelimit.limit({
      ...body,
      identifier: "user_badguy",
      limit: 1000n,
      cost: 0n,
    });
    expect(denied.data).toMatchObject({
      success: false,
      limit: 0n,
      remaining: 0n,
      overrideId: blocked,
    });
  });

  it.each<[string, Limit, string]>([
    [
      "an empty namespace",
      { namespace: "", identifier: "u", limit: 1n, duration: 1000n },
      "/namespace",
    ],
    [
      "a namespace of 513 characters",
      { namespace: "n".repeat(513), identifier: "u", limit: 1n, duration: 1000n },
      "/namespace",
    ],
    [
      "an identifier of 513 characters",
      { namespace: "ok", identifier: "i".repeat(513), limit: 1n, duration: 1000n },
      "/identifier",
    ],
    ["a limit of 0", { namespace: "ok", identifier: "u", limit: 0n, duration: 1000n }, "/limit"],
    [
      "a duration of 999",
      { namespace: "ok", identifier: "u", limit: 1n, duration: 999n },
      "/duration",
    ],
    [
      "a duration over 30 days",
      { namespace: "ok", identifier: "u", limit: 1n, duration: 2_592_000_001n },
      "/duration",
    ],
    [
      "a negative cost",
      { namespace: "ok", identifier: "u", limit: 1n, duration: 1000n, cost: -1n },
      "/cost",
    ],
  ])("rejects %s with 400 and writes nothing", async (_, body, location) => {
    const before = await s.snapshot();
    const r = await refusal(s.api.ratelimit.limit(body));
    expect(r.code).toBe(Code.InvalidArgument);
    expect(r.status).toBe(400);
    expect(r.errors.map((e) => e.location)).toEqual([location]);
    expect(await s.changesSince(before)).toEqual({});
  });

  it("records each decision for analytics", async () => {
    const ns = `events.${++n}`;
    const body = { namespace: ns, identifier: "ev", limit: 1n, duration: HOUR };
    await s.api.ratelimit.limit(body);
    await s.api.ratelimit.limit(body);
    await s.app.deps.events.flush();
    const rows = await s.db.query<{ passed: boolean; identifier: string }>(
      "select e.passed, e.identifier from ratelimit_events e join ratelimit_namespaces n on n.id = e.namespace_id where n.name = $1 order by e.passed desc",
      [ns],
    );
    expect(rows).toEqual([
      { passed: true, identifier: "ev" },
      { passed: false, identifier: "ev" },
    ]);
  });

  it("leaves a decision out when the caller sends X-Unkey-Metrics: disabled", async () => {
    const ns = `events.quiet.${++n}`;
    const body = { namespace: ns, identifier: "q", limit: 5n, duration: HOUR };
    const quiet = await s.api.ratelimit.limit(body, { headers: { "x-unkey-metrics": "disabled" } });
    expect(quiet.data?.success).toBe(true);
    await s.api.ratelimit.limit(body);
    await s.app.deps.events.flush();
    const rows = await s.db.query<{ remaining: number }>(
      "select e.remaining from ratelimit_events e join ratelimit_namespaces n on n.id = e.namespace_id where n.name = $1",
      [ns],
    );
    expect(rows.map((r) => Number(r.remaining))).toEqual([3]);
  });
});
