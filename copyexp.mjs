import { PGlite } from "@electric-sql/pglite";
import { rmSync } from "node:fs";
const dir = "/tmp/copyexp-" + process.pid;
const pg = await PGlite.create({ dataDir: dir });
const mk = (name, partitioned, indexes) => `
create table ${name} (time bigint not null, workspace_id text not null, api_id text, key_id text, identity_id text, external_id text, outcome text not null, tags text[] not null, spent_credits bigint not null, request_id text not null)${partitioned ? " partition by range (time)" : ""};
${indexes ? `create index on ${name} (workspace_id, time); create index on ${name} (key_id, time);` : ""}
${partitioned ? `create table ${name}_p partition of ${name} for values from (0) to (9999999999999);` : ""}`;
await pg.exec(mk("a", true, true) + mk("b", true, false) + mk("c", false, false) + mk("d", false, true));
let i = 0;
const rows = (n) => { let s = ""; for (let k = 0; k < n; k++) { i++; s += `${Date.now()},ws_4ZeTggi7oYuRWk9t,api_4ZeTggi7oYuRWk9t,key_4ZeTggi7oYuRWk9t,,,VALID,{},0,req_${i.toString(36).padStart(16, "0")}\n`; } return s; };
const N = Number(process.env.N ?? 100), STMTS = 300;
for (const t of ["a", "b", "c", "d", "a", "b", "c", "d"]) {
  const ms = [];
  await pg.exec("begin");
  for (let s = 0; s < STMTS; s++) {
    const blob = new Blob([rows(N)]);
    const t0 = performance.now();
    await pg.exec(`copy ${t} from '/dev/blob' with (format csv)`, { blob });
    ms.push(performance.now() - t0);
  }
  const t0 = performance.now(); await pg.exec("commit"); const commit = performance.now() - t0;
  ms.sort((x, y) => x - y);
  console.log(t, `rows/stmt ${N}: mean ${(ms.reduce((a, b) => a + b) / ms.length).toFixed(3)} ms, p50 ${ms[150].toFixed(3)}, p90 ${ms[270].toFixed(3)}, max ${ms.at(-1).toFixed(2)}; commit ${commit.toFixed(1)} ms`);
}
await pg.close(); rmSync(dir, { recursive: true, force: true });
