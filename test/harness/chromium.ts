import { existsSync } from "node:fs";
import { type Browser, chromium } from "playwright-core";

/** Debian's Chromium; the browser tests skip without it (`apt-get install chromium`). */
export const CHROMIUM = "/usr/bin/chromium";
export const haveChromium = existsSync(CHROMIUM);

/**
 * Starts headless Chromium as this machine needs it: no sandbox (root), no GPU, and none of
 * the background connections Chromium makes at start (this machine's closed network refuses
 * them). Playwright gives each launch a fresh, empty profile directory of its own.
 */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
}
