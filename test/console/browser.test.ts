import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { KeyFormat, LeakPolicy } from "../../gen/latchkey/v2/apis_pb.js";
import { useServer } from "../harness/server.js";
import {
  consolePage,
  focusedElement,
  haveChromium,
  launchChromium,
  signInWith,
  textOnceContains,
} from "./browser.js";
import { ensureConsoleBuilt } from "./built.js";
import { json } from "./helpers.js";

const s = useServer();

/** Polls `check` until it is true, clicking Refresh in between (analytics is written in batches). */
async function until(check: () => Promise<boolean>, between: () => Promise<void>): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error("condition not met within 60 s");
    await between();
  }
}

describe.skipIf(!haveChromium)("the console in headless Chromium", () => {
  let browser: Browser;
  beforeAll(async () => {
    ensureConsoleBuilt();
    browser = await launchChromium();
  }, 300_000);
  afterAll(() => browser?.close());

  it("signs in, creates an API and a key, sees a verification on the chart, revokes the key and finds the audit entry", async () => {
    const { page, context, problems } = await consolePage(browser);
    try {
      await signInWith(page, s.url, s.rootKey);
      // The root key is nowhere the page's scripts can read; the session cookie is HttpOnly.
      const stored = await page.evaluate<string>(
        "JSON.stringify([{ ...localStorage }, { ...sessionStorage }, document.cookie])",
      );
      expect(stored).not.toContain(s.rootKey);
      expect(stored).not.toContain("latchkey_console");
      const cookies = await context.cookies();
      expect(cookies.map((c) => [c.name, c.httpOnly, c.sameSite])).toEqual([
        ["latchkey_console", true, "Strict"],
      ]);

      await page.getByRole("button", { name: "Create API" }).click();
      await page.getByRole("dialog").getByLabel("Name").fill("payments");
      await page.getByRole("dialog").getByRole("button", { name: "Create" }).click();
      await page.getByRole("heading", { name: "payments" }).waitFor();
      const apiId = /\/console\/apis\/(api_\w+)$/.exec(page.url())?.[1];
      expect(apiId).toBeDefined();

      await page.getByRole("button", { name: "Create key" }).click();
      const form = page.getByRole("dialog");
      await form.getByLabel("Name", { exact: true }).fill("checkout");
      await form.getByLabel("Prefix").fill("pay");
      await form.getByLabel("Credits", { exact: true }).fill("50");
      await form.getByRole("button", { name: "Create key" }).click();
      const secret = (await page.getByTestId("secret").textContent()) ?? "";
      expect(secret).toMatch(/^pay_/);
      await page.getByRole("button", { name: "Done" }).click();
      await page.getByRole("row", { name: /checkout/ }).waitFor();

      // What curl does: a plain HTTP request to the /v2 door with the key.
      const verify = await fetch(`${s.url}/v2/keys.verifyKey`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${s.rootKey}` },
        body: JSON.stringify({ key: secret }),
      });
      const verdict = await json(verify);
      expect(verdict.data).toMatchObject({ valid: true, code: "VALID", credits: 49 });

      await page.getByRole("link", { name: "Analytics" }).click();
      await page.getByRole("radio", { name: "1h" }).click();
      const total = page.getByTestId("verification-total");
      await until(
        async () => (await total.textContent())?.includes("1 verifications, 1 valid") === true,
        () => page.getByRole("button", { name: "Refresh" }).click(),
      );
      await page.getByRole("img", { name: /1 in all, 1 valid/ }).waitFor();
      await textOnceContains(page.getByRole("table", { name: "Top keys" }), verdict.data.keyId);

      // Revoke the key from its page.
      await page.goto(`${s.url}/console/apis/${apiId}`);
      await page.getByRole("button", { name: "Manage key checkout" }).click();
      await page.getByRole("button", { name: "Delete key" }).click();
      // The dialog closes once the key is deleted; then the list no longer shows it.
      await page.getByRole("dialog").waitFor({ state: "detached" });
      await page.getByText("No keys match.").waitFor();
      const after = await fetch(`${s.url}/v2/keys.verifyKey`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${s.rootKey}` },
        body: JSON.stringify({ key: secret }),
      });
      expect((await json(after)).data).toMatchObject({ valid: false, code: "NOT_FOUND" });

      await page.getByRole("link", { name: "Audit log" }).click();
      await page.getByLabel("Event").fill("key.delete");
      await page.getByRole("button", { name: "Apply filters" }).click();
      const records = page.getByRole("table", { name: "Audit records" });
      expect(await textOnceContains(records, verdict.data.keyId)).toContain("key.delete");
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  }, 180_000);

  it("manages a key: disables and enables it, sets its credits, rerolls it with a grace period, shows its credit statement", async () => {
    const { keyId, key, apiId } = await s.seed.key({ name: "worker", credits: { remaining: 10 } });
    const verify = async (k: string) => {
      const res = await fetch(`${s.url}/v2/keys.verifyKey`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${s.rootKey}` },
        body: JSON.stringify({ key: k }),
      });
      return (await json(res)).data;
    };
    const { page, context, problems } = await consolePage(browser);
    try {
      await signInWith(page, s.url, s.rootKey);
      await page.goto(`${s.url}/console/apis/${apiId}`);
      const manage = page.getByRole("button", { name: "Manage key worker" });
      await manage.click();
      const dialog = page.getByRole("dialog");
      await dialog.getByRole("switch").click();
      await dialog.getByText("Disabled").waitFor();
      expect((await verify(key)).code).toBe("DISABLED");
      await dialog.getByRole("switch").click();
      await dialog.getByText("Enabled").waitFor();
      expect((await verify(key)).code).toBe("VALID");

      await dialog.getByLabel("Credits").fill("500");
      await dialog.getByRole("button", { name: "Set credits" }).click();
      // The list behind the dialog (hidden from the accessibility tree meanwhile) shows it.
      await page
        .locator(`tr[data-key-id="${keyId}"]`)
        .filter({ hasText: "500" })
        .waitFor({ state: "attached" });
      expect(await verify(key)).toMatchObject({ code: "VALID", credits: 499 });

      await dialog.getByLabel("Grace period (s)").fill("600");
      await dialog.getByRole("button", { name: "Reroll" }).click();
      const rerolled = (await page.getByTestId("secret").textContent()) ?? "";
      expect(rerolled).not.toBe(key);
      await page.getByRole("button", { name: "Done" }).click();
      expect((await verify(rerolled)).code).toBe("VALID");
      // The old key keeps working through the grace period.
      expect((await verify(key)).code).toBe("VALID");

      await page.getByRole("link", { name: "Analytics" }).click();
      await page.getByLabel("Key id").fill(keyId);
      await page.getByRole("button", { name: "Show", exact: true }).click();
      await page
        .getByRole("img", { name: new RegExp(`Credits of ${keyId}: [1-9]\\d* spent`) })
        .waitFor();
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  }, 180_000);

  it("changes an API's settings from its page, and a verification sees its networks at once", async () => {
    const { key, apiId } = await s.seed.key({ name: "networked" });
    const verify = async (clientIp: string) => {
      const res = await fetch(`${s.url}/v2/keys.verifyKey`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${s.rootKey}` },
        body: JSON.stringify({ key, clientIp }),
      });
      return (await json(res)).data.code;
    };
    expect(await verify("198.51.100.1")).toBe("VALID");
    const { page, context, problems } = await consolePage(browser);
    try {
      await signInWith(page, s.url, s.rootKey);
      await page.goto(`${s.url}/console/apis/${apiId}`);
      await page.getByRole("button", { name: "API settings" }).click();
      const dialog = page.getByRole("dialog");
      await dialog.getByLabel("Name").fill("networked api");
      await dialog.getByLabel("Allowed networks").fill("10.0.0.0/8, 2001:db8::/32");
      await dialog.getByRole("combobox", { name: "When a key leaks" }).click();
      await page.getByRole("option", { name: "Only record it" }).click();
      await dialog.getByRole("button", { name: "Save settings" }).click();
      await page.getByRole("heading", { name: "networked api" }).waitFor();
      expect((await s.api.apis.getApi({ apiId })).data).toMatchObject({
        name: "networked api",
        leakPolicy: LeakPolicy.NOTIFY,
        keyFormat: KeyFormat.CHECKSUMMED,
        allowedCidrs: ["10.0.0.0/8", "2001:db8::/32"],
      });
      expect(await verify("198.51.100.1")).toBe("FORBIDDEN");
      expect(await verify("10.1.2.3")).toBe("VALID");

      // Emptied, the list is removed: the key verifies from anywhere again.
      await page.getByRole("button", { name: "API settings" }).click();
      await dialog.getByLabel("Allowed networks").fill("");
      await dialog.getByRole("button", { name: "Save settings" }).click();
      await dialog.waitFor({ state: "detached" });
      expect(await verify("198.51.100.1")).toBe("VALID");

      // A range the server refuses is shown in the dialog, which stays open.
      await page.getByRole("button", { name: "API settings" }).click();
      await dialog.getByLabel("Allowed networks").fill("10.0.0.1/8");
      await dialog.getByRole("button", { name: "Save settings" }).click();
      await textOnceContains(dialog.getByRole("alert"), "10.0.0.0/8");
      expect((await s.api.apis.getApi({ apiId })).data?.allowedCidrs).toEqual([]);
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  }, 180_000);

  it("shows a narrow root key only what it may see, and says what it may not do", async () => {
    const mine = await s.seed.api(undefined, "mine");
    const theirs = await s.seed.api(undefined, "theirs");
    const narrow = await s.seed.rootKey([`api.${mine}.read_api`, `api.${mine}.read_key`]);
    const { page, context, problems } = await consolePage(browser);
    try {
      await signInWith(page, s.url, narrow);
      await page.getByRole("link", { name: "mine" }).waitFor();
      expect(await page.getByRole("link", { name: "theirs" }).count()).toBe(0);
      expect(await page.getByRole("button", { name: "Create API" }).count()).toBe(0);
      // The other API, asked for by its address, is refused in words.
      await page.goto(`${s.url}/console/apis/${theirs}`);
      await textOnceContains(
        page.getByRole("alert"),
        `Your root key may not read this API (it needs api.${theirs}.read_api)`,
      );
      await page.getByRole("link", { name: "Audit log" }).click();
      await textOnceContains(
        page.getByRole("alert"),
        "Your root key may not read the audit log (it needs audit.*.read)",
      );
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  }, 120_000);

  it("can be signed in to and moved through with the keyboard alone", async () => {
    const { page, context } = await consolePage(browser);
    try {
      await page.goto(`${s.url}/console/`);
      // The root key field is labelled and has the focus.
      await page.getByLabel("Root key").waitFor();
      expect(await focusedElement(page)).toBe("input password");
      await page.keyboard.type(s.rootKey);
      await page.keyboard.press("Enter");
      await page.getByRole("heading", { name: "APIs" }).waitFor();
      // The first Tab reaches the skip link, the next ones the navigation.
      await page.keyboard.press("Tab");
      expect(await focusedElement(page)).toBe("a  Skip to content");
      await page.keyboard.press("Tab");
      expect(await focusedElement(page)).toBe("a  APIs");
      await page.keyboard.press("Tab");
      expect(await focusedElement(page)).toBe("a  Identities");
      await page.keyboard.press("Enter");
      await page.getByRole("heading", { name: "Identities" }).waitFor();
      expect(new URL(page.url()).pathname).toBe("/console/identities");
    } finally {
      await context.close();
    }
  }, 120_000);

  it("fits a phone's width, with the navigation behind a menu button", async () => {
    const { page, context, problems } = await consolePage(browser, { width: 390, height: 844 });
    try {
      await signInWith(page, s.url, s.rootKey);
      await page.getByRole("heading", { name: "APIs" }).waitFor();
      const nav = page.getByRole("link", { name: "Audit log" });
      expect(await nav.isVisible()).toBe(false);
      const menu = page.getByRole("button", { name: "Menu" });
      expect(await menu.getAttribute("aria-expanded")).toBe("false");
      await menu.click();
      expect(await menu.getAttribute("aria-expanded")).toBe("true");
      await nav.click();
      await page.getByRole("heading", { name: "Audit log" }).waitFor();
      const width = await page.evaluate<number>("document.documentElement.scrollWidth");
      expect(width).toBeLessThanOrEqual(390);
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  }, 120_000);
});
