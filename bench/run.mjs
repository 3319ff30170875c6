// npm run bench: every benchmark of bench/, one after the other (they share the machine).
// `npm run bench -- get-api` runs only the named ones. Results go to bench/results/.
import { spawnSync } from "node:child_process";

const ALL = ["get-api", "keys", "verify", "ratelimit", "analytics"];
const wanted = process.argv.slice(2);
const chosen = wanted.length > 0 ? ALL.filter((b) => wanted.includes(b)) : ALL;
for (const name of chosen) {
  console.log(`\n##### ${name}`);
  const r = spawnSync(process.execPath, [new URL(`./${name}.mjs`, import.meta.url).pathname], {
    stdio: "inherit",
  });
  if (r.status !== 0) process.exit(r.status ?? 1);
}
