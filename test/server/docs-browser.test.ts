import { existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium } from "playwright-core";
import { describe, expect, it } from "vitest";
import { SERVICES } from "../harness/doors.js";
import { useServer } from "../harness/server.js";

const CHROMIUM = "/usr/bin/chromium";
// The README's screenshot is refreshed with UPDATE_SCREENSHOT=1; otherwise it goes to tmp.
const SCREENSHOT = process.env.UPDATE_SCREENSHOT
  ? new URL("../../bench/results/docs.png", import.meta.url).pathname
  : join(tmpdir(), "latchkey-docs.png");
const s = useServer();

describe.skipIf(!existsSync(CHROMIUM))("/docs in headless Chromium", () => {
  it("loads the API reference and lists every procedure", async () => {
    const browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox"] });
    try {
      const page = await browser.newPage({ viewport: { width: 1280, height: 1600 } });
      const requests: string[] = [];
      page.on("request", (r) => requests.push(r.url()));
      await page.goto(`${s.url}/docs`);
      await page.waitForSelector(".opblock", { timeout: 30_000 });
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
      await browser.close();
    }
  }, 90_000);
});
