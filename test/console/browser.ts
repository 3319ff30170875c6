import type { Browser, BrowserContext, Locator, Page } from "playwright-core";

export { haveChromium, launchChromium } from "../harness/chromium.js";

/** A page in a context of its own, with every CSP refusal and page error collected. */
export async function consolePage(
  browser: Browser,
  viewport = { width: 1280, height: 900 },
): Promise<{ page: Page; context: BrowserContext; problems: string[] }> {
  const context = await browser.newContext({ viewport });
  const page = await context.newPage();
  const problems: string[] = [];
  page.on("console", (m) => {
    if (/Content Security Policy|Refused to/i.test(m.text())) problems.push(m.text());
  });
  page.on("pageerror", (e) => problems.push(String(e)));
  return { page, context, problems };
}

/** Signs in on the console's sign-in page with `rootKey`, as a user types it. */
export async function signInWith(page: Page, baseUrl: string, rootKey: string): Promise<void> {
  await page.goto(`${baseUrl}/console/`);
  await page.getByLabel("Root key").fill(rootKey);
  await page.getByRole("button", { name: "Sign in" }).click();
  // The navigation is in the page once signed in (hidden behind the menu on a phone).
  await page.locator("#console-nav").waitFor({ state: "attached" });
}

/** What has the keyboard focus: its tag, its type and its text. */
export function focusedElement(page: Page): Promise<string> {
  return page.evaluate<string>(
    "(() => { const e = document.activeElement; return e ? [e.tagName.toLowerCase(), e.getAttribute('type') ?? '', e.textContent ?? ''].join(' ').trim() : ''; })()",
  );
}

/** The element's text once it contains `text` (waits up to Playwright's timeout). */
export async function textOnceContains(locator: Locator, text: string): Promise<string> {
  await locator.filter({ hasText: text }).first().waitFor();
  return (await locator.first().textContent()) ?? "";
}
