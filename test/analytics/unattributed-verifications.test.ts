import { describe, expect, it } from "vitest";
import { type TestServer, useServer } from "../harness/server.js";

// Anyone may call verifyKey without a root key. A verification of an unknown key without one
// belongs to no workspace: it is counted in a metric and nothing is stored for it, so an
// anonymous flood with the largest tags costs no disk. With a root key the same verification
// is stored in the root key's workspace.

/** How many anonymous verifications the test sends (ANONYMOUS_VERIFICATIONS to measure more). */
const ANONYMOUS = Number(process.env.ANONYMOUS_VERIFICATIONS ?? 300);
const CONCURRENCY = 16;

/** The largest tags a verification may carry: 20 of 512 characters, different per call. */
const maxTags = (n: number) =>
  Array.from({ length: 20 }, (_, i) => `${n}:${i}:`.padEnd(512, String.fromCodePoint(0x4e00 + i)));

const EVENT_TABLES = [
  "key_verifications",
  "verifications_per_minute",
  "verifications_per_hour",
  "verifications_per_day",
  "verifications_per_month",
];

/** Rows of the event and rollup tables, and their size on disk with indexes and TOAST. */
async function stored(s: TestServer): Promise<{ rows: number; bytes: number }> {
  let rows = 0;
  let bytes = 0;
  for (const table of EVENT_TABLES) {
    const [r] = await s.db.query<{ n: number }>(`select count(*)::int as n from ${table}`);
    rows += r?.n ?? 0;
    // The partitions of a table, or the table itself when it is not partitioned.
    const [b] = await s.db.query<{ bytes: number }>(
      `select coalesce(sum(pg_total_relation_size(c.oid)), 0)::bigint as bytes
       from pg_class c
       where c.oid = $1::regclass
          or c.oid in (select inhrelid from pg_inherits where inhparent = $1::regclass)`,
      [table],
    );
    bytes += Number(b?.bytes ?? 0);
  }
  return { rows, bytes };
}

/** latchkey_verifications_unattributed_total{outcome="NOT_FOUND"}, 0 when absent. */
async function unattributed(s: TestServer): Promise<number> {
  const res = await s.admin("/metrics");
  const m = /^latchkey_verifications_unattributed_total\{outcome="NOT_FOUND"\} (\d+)$/m.exec(
    res.text,
  );
  return m ? Number(m[1]) : 0;
}

describe("verifications that resolve to no workspace", () => {
  const s = useServer();

  it("are counted and not stored, however large their tags", async () => {
    // The day's partitions exist already, so the size below is the rows' own.
    const known = await s.seed.key();
    await s.call("json", "keys.verifyKey", { key: known.key, tags: ["warm-up"] }, null);
    expect(await s.app.deps.events.flush()).toBe(true);
    const before = await stored(s);
    const countedBefore = await unattributed(s);
    const eventsBefore = s.app.deps.events.stats();

    let next = 0;
    const worker = async () => {
      while (next < ANONYMOUS) {
        const n = next++;
        const body = { key: `sk_unknown_${n}`, tags: maxTags(n) };
        const res = await s.call("json", "keys.verifyKey", body, null);
        expect(res.status).toBe(200);
        expect(res.data).toEqual({ valid: false, code: "NOT_FOUND" });
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
    expect(await s.app.deps.events.flush()).toBe(true);

    const after = await stored(s);
    console.log(
      `${ANONYMOUS} anonymous verifications with 20 tags of 512 characters: ` +
        `${after.rows - before.rows} rows, ${after.bytes - before.bytes} bytes on disk`,
    );
    expect(after.rows).toBe(before.rows);
    expect(await unattributed(s)).toBe(countedBefore + ANONYMOUS);
    // They never reached the event buffer: nothing recorded, nothing dropped.
    const events = s.app.deps.events.stats();
    expect(events.recorded + events.dropped).toBe(eventsBefore.recorded + eventsBefore.dropped);
  });

  it("store no row of any kind when header-less, with an apiId or without", async () => {
    const own = await s.seed.key();
    const other = await s.seed.key(); // a key of another API of the same workspace
    expect(await s.app.deps.events.flush()).toBe(true);
    const before = await stored(s);
    const countedBefore = await unattributed(s);
    const bodies = [
      { key: "sk_unknown_no_api" },
      { key: "sk_unknown_in_api", apiId: own.apiId },
      { key: other.key, apiId: own.apiId },
      { key: "sk_unknown_api", apiId: "api_doesnotexist1234" },
    ];
    const requestIds: string[] = [];
    for (const body of bodies) {
      const res = await s.call("json", "keys.verifyKey", { ...body, tags: ["t"] }, null);
      expect(res.data).toEqual({ valid: false, code: "NOT_FOUND" });
      requestIds.push(res.requestId as string);
    }
    expect(await s.app.deps.events.flush()).toBe(true);
    const rows = await s.db.query<{ n: number }>(
      "select count(*)::int as n from key_verifications where request_id = any($1::text[])",
      [requestIds],
    );
    expect(rows[0]?.n).toBe(0);
    expect(await stored(s)).toMatchObject({ rows: before.rows });
    for (const table of EVENT_TABLES) {
      const [blank] = await s.db.query<{ n: number }>(
        `select count(*)::int as n from ${table} where workspace_id = ''`,
      );
      expect(blank?.n, table).toBe(0);
    }
    expect(await unattributed(s)).toBe(countedBefore + bodies.length);
  });

  it("are stored in the root key's workspace when a root key comes with them", async () => {
    const countedBefore = await unattributed(s);
    const tags = maxTags(-1);
    const res = await s.call("json", "keys.verifyKey", { key: "sk_unknown_with_root", tags });
    expect(res.data).toEqual({ valid: false, code: "NOT_FOUND" });
    expect(await s.app.deps.events.flush()).toBe(true);
    const rows = await s.db.query<{ workspace_id: string; key_id: string | null; tags: string[] }>(
      "select workspace_id, key_id, tags from key_verifications where request_id = $1",
      [res.requestId],
    );
    expect(rows).toEqual([{ workspace_id: s.workspaceId, key_id: null, tags }]);
    const [hour] = await s.db.query<{ n: number }>(
      `select sum(count)::int as n from verifications_per_hour
       where workspace_id = $1 and outcome = 'NOT_FOUND' and key_id is null`,
      [s.workspaceId],
    );
    expect(hour?.n).toBe(1);
    expect(await unattributed(s)).toBe(countedBefore);
  });

  it("of a known key are stored in the key's workspace, with or without a root key", async () => {
    const k = await s.seed.key();
    const anonymous = await s.call("json", "keys.verifyKey", { key: k.key, tags: ["a"] }, null);
    const rooted = await s.call("json", "keys.verifyKey", { key: k.key, tags: ["b"] });
    expect(await s.app.deps.events.flush()).toBe(true);
    const rows = await s.db.query<{ workspace_id: string; key_id: string }>(
      "select workspace_id, key_id from key_verifications where request_id = any($1::text[])",
      [[anonymous.requestId, rooted.requestId]],
    );
    expect(rows).toEqual([
      { workspace_id: s.workspaceId, key_id: k.keyId },
      { workspace_id: s.workspaceId, key_id: k.keyId },
    ]);
  });
});
