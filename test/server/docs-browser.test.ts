import { existsSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Browser, chromium } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OPENAPI_DOCUMENT_URL } from "../../src/server/openapi.js";
import { SERVICES } from "../harness/doors.js";
import { useServer } from "../harness/server.js";

const CHROMIUM = "/usr/bin/chromium";
// The README's screenshot is refreshed with UPDATE_SCREENSHOT=1; otherwise it goes to tmp.
const SCREENSHOT = process.env.UPDATE_SCREENSHOT
  ? new URL("../../docs/images/docs.png", import.meta.url).pathname
  : join(tmpdir(), "latchkey-docs.png");
const s = useServer();
const document = JSON.parse(readFileSync(OPENAPI_DOCUMENT_URL, "utf8"));
/** The documented example body of an operation, which "Try it out" starts from. */
const exampleBody = (path: string) =>
  document.paths[path].post.requestBody.content["application/json"].example;

describe.skipIf(!existsSync(CHROMIUM))("/docs in headless Chromium", () => {
  // One browser for the file; each test's page has a browser context (storage) of its own.
  let browser: Browser;
  beforeAll(async () => {
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox"] });
  });
  afterAll(() => browser?.close());

  it("loads the API reference and lists every procedure", async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 1600 } });
    try {
      const requests: string[] = [];
      page.on("request", (r) => requests.push(r.url()));
      await page.goto(`${s.url}/docs`);
      await page.waitForSelector(".opblock", { timeout: 30_000 });
      // The introduction's placeholders are shown, not taken for HTML tags.
      expect(await page.locator(".information-container").textContent()).toContain(
        "Authorization: Bearer <root key>",
      );
      const paths = await page.$$eval(".opblock-summary-path", (els) =>
        els.map((e) => e.getAttribute("data-path") ?? e.textContent ?? ""),
      );
      const procedures = SERVICES.flatMap((svc) =>
        svc.methods.map((m) => {
          const ns = svc.name.replace(/Service$/, "");
          return `/v2/${ns.charAt(0).toLowerCase()}${ns.slice(1)}.${m.localName}`;
        }),
      );
      for (const p of procedures) expect(paths.join("\n")).toContain(p);
      // Nothing was fetched from outside this server.
      expect(requests.filter((u) => !u.startsWith(s.url))).toEqual([]);
      await page.screenshot({ path: SCREENSHOT });
      console.log(`${paths.length} operations rendered; screenshot at ${SCREENSHOT}`);
    } finally {
      await page.context().close();
    }
  }, 90_000);

  it("runs under its Content-Security-Policy and keeps the root key out of browser storage", async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 1600 } });
    try {
      // Chromium reports every CSP refusal on the console ("Refused to ...").
      const problems: string[] = [];
      page.on("console", (m) => {
        if (m.type() === "error" || /Content Security Policy|Refused to/i.test(m.text()))
          problems.push(m.text());
      });
      page.on("pageerror", (e) => problems.push(String(e)));
      const sent: (string | undefined)[] = [];
      const bodies: unknown[] = [];
      page.on("request", (r) => {
        if (!r.url().endsWith("/v2/apis.createApi")) return;
        sent.push(r.headers().authorization);
        bodies.push(r.postDataJSON());
      });
      const res = await page.goto(`${s.url}/docs`);
      await page.waitForSelector(".opblock", { timeout: 30_000 });
      await page.click("button.authorize");
      await page.fill("#auth-bearer-value", s.rootKey);
      await page.click(".modal-ux button.modal-btn.auth.authorize");
      await page.click(".modal-ux button.btn-done");
      // "Try it out" on createApi: the documented example goes out with the key and gets 200.
      const op = page.locator(".opblock", {
        has: page.locator('.opblock-summary-path[data-path="/v2/apis.createApi"]'),
      });
      await op.locator(".opblock-summary-control").click();
      await op.locator("button.try-out__btn").click();
      await op.locator("button.execute").click();
      await op.locator(".live-responses-table tbody .response-col_status").first().waitFor();
      expect(
        await op.locator(".live-responses-table tbody .response-col_status").first().textContent(),
      ).toContain("200");
      expect(sent).toEqual([`Bearer ${s.rootKey}`]);
      expect(bodies).toEqual([exampleBody("/v2/apis.createApi")]);
      // The permission sentence shows its placeholder (Markdown would take <apiId> for a tag).
      const getApi = page.locator(".opblock", {
        has: page.locator('.opblock-summary-path[data-path="/v2/apis.getApi"]'),
      });
      await getApi.locator(".opblock-summary-control").click();
      expect(await getApi.locator(".opblock-description-wrapper").first().textContent()).toContain(
        "Permission: api.<apiId>.read_api",
      );
      // A string, evaluated in the page (the test itself has no DOM types).
      const stored = await page.evaluate<string>(
        "JSON.stringify([{ ...localStorage }, { ...sessionStorage }, document.cookie])",
      );
      expect(stored).not.toContain(s.rootKey);
      // After a reload the page no longer holds the key: nothing kept it.
      await page.reload();
      await page.waitForSelector(".opblock", { timeout: 30_000 });
      expect(await page.locator("button.authorize.locked").count()).toBe(0);
      expect(problems).toEqual([]);
      expect(res?.headers()["content-security-policy"]).toContain("script-src 'self'");
    } finally {
      await page.context().close();
    }
  }, 90_000);
});
