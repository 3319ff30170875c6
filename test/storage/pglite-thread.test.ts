import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, inject, it } from "vitest";
import { DbUnavailableError, isUniqueViolation } from "../../src/storage/db.js";
import { openPglite, type PgliteDb } from "../../src/storage/pglite.js";

// The PGlite adapter runs the database in a worker thread; these check that the port behaves
// as in-process PGlite did: values, errors, transactions, notifications, dumps, closing.
// (The engine-independent behaviour is covered by the whole suite, which runs on it.)
describe.runIf(process.env.TEST_ENGINE === "pglite")("PGlite in a worker thread", () => {
  let db: PgliteDb | undefined;
  // The run's migrated database (global-setup.ts): opening it is quicker than an initdb.
  const open = () =>
    openPglite({ loadDataDir: new Blob([readFileSync(inject("pgliteDumpPath"))]) });
  afterEach(async () => {
    await db?.close();
    db = undefined;
  });

  it("returns rows with int8 as numbers, jsonb parsed, arrays and nulls", async () => {
    db = await open();
    const [row] = await db.query<Record<string, unknown>>(
      "select 9007199254740991::int8 as big, $1::text::jsonb as doc, $2::text[] as tags, null::text as nothing",
      [JSON.stringify({ a: [1, "x"] }), ["a", "b"]],
    );
    expect(row).toEqual({
      big: 9007199254740991,
      doc: { a: [1, "x"] },
      tags: ["a", "b"],
      nothing: null,
    });
  });

  it("gives errors their SQLSTATE, so callers can tell a duplicate from bad SQL", async () => {
    db = await open();
    await db.exec("create table scratch (id text primary key)");
    await db.query("insert into scratch values ($1)", ["a"]);
    const dup = await db.query("insert into scratch values ($1)", ["a"]).catch((e: unknown) => e);
    expect(isUniqueViolation(dup)).toBe(true);
    expect((dup as Error).message).toMatch(/duplicate key/);
    const bad = await db.query("select from nowhere").catch((e: unknown) => e);
    expect((bad as { code?: string }).code).toBe("42P01");
  });

  it("commits a transaction that resolves and rolls back one that throws", async () => {
    db = await open();
    await db.exec("create table scratch (n int)");
    const got = await db.transaction(async (tx) => {
      await tx.query("insert into scratch values (1)");
      return (await tx.query<{ c: number }>("select count(*)::int as c from scratch"))[0]?.c;
    });
    expect(got).toBe(1);
    const boom = new Error("boom");
    await expect(
      db.transaction(async (tx) => {
        await tx.query("insert into scratch values (2)");
        throw boom;
      }),
    ).rejects.toBe(boom);
    // A failed statement inside a transaction rolls it back too, and the connection recovers.
    await expect(
      db.transaction(async (tx) => {
        await tx.query("insert into scratch values (3)");
        await tx.query("insert into scratch values ('x')");
      }),
    ).rejects.toMatchObject({ code: "22P02" });
    expect(await db.query("select n from scratch order by n")).toEqual([{ n: 1 }]);
  });

  it("queues queries outside a transaction behind it", async () => {
    db = await open();
    await db.exec("create table scratch (n int)");
    const order: string[] = [];
    let inside!: () => void;
    const entered = new Promise<void>((r) => {
      inside = r;
    });
    const tx = db.transaction(async (q) => {
      inside();
      await q.query("insert into scratch values (1)");
      order.push("tx");
    });
    await entered;
    const outside = db.query<{ c: number }>("select count(*)::int as c from scratch").then((r) => {
      order.push("outside");
      return r[0]?.c;
    });
    await tx;
    expect(await outside).toBe(1);
    expect(order).toEqual(["tx", "outside"]);
  });

  it("delivers NOTIFY to listeners until they unsubscribe", async () => {
    db = await open();
    const got: string[] = [];
    let connected = 0;
    const stop = await db.listen(
      "chan",
      (p) => got.push(p),
      () => connected++,
    );
    expect(connected).toBe(1);
    await db.query("select pg_notify('chan', 'one')");
    const deadline = Date.now() + 10_000;
    while (got.length < 1 && Date.now() < deadline) await new Promise((r) => setImmediate(r));
    expect(got).toEqual(["one"]);
    await stop();
    await db.query("select pg_notify('chan', 'two')");
    await db.query("select 1");
    expect(got).toEqual(["one"]);
  });

  it("dumps a database another one starts from", async () => {
    db = await open();
    await db.exec("create table scratch (s text); insert into scratch values ('kept')");
    const dump = await db.dump();
    const copy = await openPglite({ loadDataDir: dump });
    try {
      expect(await copy.query("select s from scratch")).toEqual([{ s: "kept" }]);
    } finally {
      await copy.close();
    }
  });

  it("answers 'unavailable' once closed, and closing twice is harmless", async () => {
    const closed = await open();
    await closed.close();
    await closed.close();
    await expect(closed.query("select 1")).rejects.toBeInstanceOf(DbUnavailableError);
  });
});

describe.runIf(process.env.TEST_ENGINE === "pglite")("a process with PGlite open", () => {
  it("exits when its work is done, even with the database left open", async () => {
    const adapter = new URL("../../dist/src/storage/pglite.js", import.meta.url).href;
    const script = `const { openPglite } = await import(${JSON.stringify(adapter)});
      const db = await openPglite({});
      console.log(JSON.stringify(await db.query("select 41 + 1 as n")));`;
    const file = join(mkdtempSync(join(tmpdir(), "latchkey-exit-")), "open.mjs");
    writeFileSync(file, script);
    const child = spawn(process.execPath, [file], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    let out = "";
    child.stdout.on("data", (c) => {
      out += c;
    });
    const t0 = performance.now();
    const code = await new Promise((resolve) => child.once("exit", resolve));
    console.log(`process exited ${Math.round(performance.now() - t0)} ms after it started`);
    expect(code).toBe(0);
    expect(out.trim()).toBe('[{"n":42}]');
  });
});
