// Rewrites the settings reference of docs/configuration.md (the section between its markers)
// from the settings table in src/config/settings.ts, compiled into dist/ first when stale.
// test/unit/config.test.ts fails while the page is out of date.
//
//   npm run docs:settings
import { spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const PAGE = `${ROOT}docs/configuration.md`;

const built = spawnSync(process.execPath, [`${ROOT}scripts/build.mjs`, "--if-stale"], {
  stdio: "inherit",
});
if (built.status !== 0) process.exit(built.status ?? 1);
const { settingsReference, withReference } = await import(
  `${ROOT}dist/src/config/settings-reference.js`
);
const page = readFileSync(PAGE, "utf8");
const next = withReference(page, settingsReference());
if (next === undefined) {
  console.error("docs/configuration.md lacks the settings reference's markers");
  process.exit(1);
}
if (next === page) console.log("docs/configuration.md is up to date");
else {
  writeFileSync(PAGE, next);
  console.log("rewrote the settings reference of docs/configuration.md");
}
