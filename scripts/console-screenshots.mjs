// Takes the screenshots of the web console shown in docs/console.md (docs/images/console-*.png):
// builds dist/ when stale, starts the built server on embedded PGlite in a temporary data
// directory, fills it with sample APIs, keys, identities, roles, overrides and verifications
// through the /v2 door, then drives Debian's Chromium (/usr/bin/chromium) with playwright-core
// through the main pages at a laptop's width and one at a phone's.
//
//   node scripts/console-screenshots.mjs [output-dir]     (default docs/images)
import { execFileSync, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
// Chromium started as the tests start it (Node runs the TypeScript module as it is).
import { launchChromium } from "../test/harness/chromium.ts";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const OUT = process.argv[2] ?? join(ROOT, "docs/images");
const ROOT_KEY = "console_screenshots_root_key_0123456789";

execFileSync(process.execPath, ["scripts/build.mjs", "--if-stale"], {
  cwd: ROOT,
  stdio: "inherit",
});
mkdirSync(OUT, { recursive: true });
const data = mkdtempSync(join(tmpdir(), "latchkey-screenshots-"));

/** Starts the built server; resolves with its base URL once it listens. */
function serve() {
  const child = spawn(process.execPath, ["dist/src/cli/main.js", "serve"], {
    cwd: ROOT,
    env: {
      ...process.env,
      PORT: "0",
      GRPC_PORT: "off",
      ADMIN_PORT: "0",
      HOST: "127.0.0.1",
      DATA_DIR: data,
      ROOT_KEY,
      EVENT_FLUSH_INTERVAL_MS: "100",
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  return new Promise((resolve, reject) => {
    const onData = (c) => {
      out += c.toString();
      const m = /"port":(\d+)[^\n]*latchkey listening/.exec(out);
      if (m) resolve({ url: `http://127.0.0.1:${m[1]}`, child });
    };
    child.stdout.on("data", onData);
    child.stderr.on("data", onData);
    child.once("exit", (code) => reject(new Error(`latchkey exited with ${code}:\n${out}`)));
  });
}

/** Calls a procedure on the /v2 door with the root key; throws on an error answer. */
async function call(url, procedure, body) {
  const res = await fetch(`${url}/v2/${procedure}`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${ROOT_KEY}` },
    body: JSON.stringify(body),
  });
  const answer = await res.json();
  if (!res.ok) throw new Error(`${procedure}: ${JSON.stringify(answer.error)}`);
  return answer.data;
}

/** Sample data: two APIs, keys of several kinds, identities, RBAC, an override, traffic. */
async function seed(url) {
  const { apiId } = await call(url, "apis.createApi", { name: "payments" });
  await call(url, "apis.createApi", { name: "search" });
  await call(url, "permissions.createPermission", {
    name: "charges.create",
    slug: "charges.create",
  });
  await call(url, "permissions.createPermission", { name: "charges.read", slug: "charges.read" });
  await call(url, "permissions.createRole", {
    name: "billing-admin",
    description: "Creates and reads charges",
    permissions: ["charges.create", "charges.read"],
  });
  const keys = [];
  for (const [name, externalId, credits] of [
    ["checkout-service", "acme", 1000],
    ["mobile-app", "acme", 25],
    ["reporting", "globex", null],
    ["partner-sandbox", "initech", 5],
  ]) {
    const body = {
      apiId,
      name,
      externalId,
      prefix: "pay",
      roles: name === "reporting" ? [] : ["billing-admin"],
    };
    if (credits !== null) body.credits = { remaining: credits };
    if (name === "mobile-app")
      body.ratelimits = [{ name: "requests", limit: 100, duration: 60000 }];
    keys.push((await call(url, "keys.createKey", body)).key);
  }
  await call(url, "identities.updateIdentity", {
    externalId: "acme",
    ratelimits: [{ name: "requests", limit: 1000, duration: 60000 }],
  });
  await call(url, "ratelimit.limit", {
    namespace: "email.outbound",
    identifier: "user_1",
    limit: 10,
    duration: 60000,
  });
  await call(url, "ratelimit.setOverride", {
    namespace: "email.outbound",
    identifier: "acme_*",
    limit: 100,
    duration: 60000,
  });
  await call(url, "ratelimit.setOverride", {
    namespace: "email.outbound",
    identifier: "abuser_7",
    limit: 0,
    duration: 60000,
  });
  // Traffic: the sandbox key runs out of credits, so outcomes differ.
  for (let i = 0; i < 40; i++) await call(url, "keys.verifyKey", { key: keys[i % keys.length] });
  for (let i = 0; i < 25; i++)
    await call(url, "keys.verifyKey", { key: keys[0], credits: { cost: 3 } });
  await call(url, "keys.verifyKey", { key: "pay_not_a_key_0000000000" });
  // Analytics is written in batches: wait until the rollups hold the traffic.
  const deadline = Date.now() + 30_000;
  for (;;) {
    const rows = await call(url, "analytics.getVerifications", {
      query: "select sum(count) as n from key_verifications_per_minute_v1",
    });
    if (Number(rows[0]?.n ?? 0) >= 66) break;
    if (Date.now() > deadline) throw new Error("analytics did not arrive within 30 s");
    await new Promise((r) => setTimeout(r, 200));
  }
  return { apiId };
}

const { url, child } = await serve();
const browser = await launchChromium();
try {
  const { apiId } = await seed(url);
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  const shot = async (name) => {
    await page.waitForLoadState("networkidle");
    await page.screenshot({ path: join(OUT, `console-${name}.png`) });
    console.log(`console-${name}.png`);
  };
  await page.goto(`${url}/console/`);
  await page.getByLabel("Root key").fill(ROOT_KEY);
  await shot("sign-in");
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("link", { name: "payments" }).waitFor();
  await shot("apis");
  await page.getByRole("link", { name: "payments" }).click();
  await page.getByRole("row", { name: /checkout-service/ }).waitFor();
  await shot("keys");
  await page.getByRole("button", { name: "Manage key mobile-app" }).click();
  await shot("key");
  await page.keyboard.press("Escape");
  await page.getByRole("button", { name: "Create key" }).click();
  await shot("create-key");
  await page.keyboard.press("Escape");
  await page.goto(`${url}/console/identities`);
  await page.getByRole("row", { name: /acme/ }).getByRole("button", { name: "Keys" }).click();
  await page.getByText(/Keys of acme/).waitFor();
  await shot("identities");
  await page.goto(`${url}/console/roles`);
  await page.getByText("billing-admin").waitFor();
  await shot("roles");
  await page.goto(`${url}/console/ratelimits`);
  await page.getByLabel("Namespace (name or id)").fill("email.outbound");
  await page.getByRole("button", { name: "Show overrides" }).click();
  await page.getByText("acme_*").waitFor();
  await shot("ratelimits");
  await page.goto(`${url}/console/audit`);
  await page.getByText("key.create").first().waitFor();
  await shot("audit");
  await page.goto(`${url}/console/analytics`);
  await page.getByRole("radio", { name: "1h" }).click();
  await page
    .getByTestId("verification-total")
    .filter({ hasText: /[1-9]\d* verifications/ })
    .waitFor();
  await shot("analytics");
  await page.setViewportSize({ width: 390, height: 844 });
  await page.goto(`${url}/console/apis/${apiId}`);
  await page.getByRole("row", { name: /checkout-service/ }).waitFor();
  await shot("phone");
} finally {
  await browser.close();
  child.kill("SIGTERM");
  rmSync(data, { recursive: true, force: true });
}
