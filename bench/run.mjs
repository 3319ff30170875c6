// npm run bench: every benchmark of bench/, one after the other (they share the machine).
// `npm run bench -- get-api` runs only the named ones; other words are handed to them, so
// `npm run bench -- verify door credits` runs two parts of the verification benchmark.
// Results go to bench/results/.
import { spawnSync } from "node:child_process";

const ALL = [
  "get-api",
  "keys",
  "verify",
  "event-writer",
  "ratelimit",
  "analytics",
  "connections",
  "noisy-neighbour",
  "pglite-hostile",
  "decode-validate",
];
const args = process.argv.slice(2);
const named = args.filter((a) => ALL.includes(a));
const rest = args.filter((a) => !ALL.includes(a));
const chosen = named.length > 0 ? ALL.filter((b) => named.includes(b)) : ALL;
for (const name of chosen) {
  console.log(`\n##### ${name}`);
  const script = new URL(`./${name}.mjs`, import.meta.url).pathname;
  const r = spawnSync(process.execPath, [script, ...rest], { stdio: "inherit" });
  if (r.status !== 0) process.exit(r.status ?? 1);
}
