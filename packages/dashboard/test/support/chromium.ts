import { existsSync } from "node:fs";
import { chromium, type Browser } from "playwright-core";

/** Debian's `chromium` package: the browser the tests drive (browser downloads are not possible here). */
export const CHROMIUM_PATH = "/usr/bin/chromium";

/** What the browser runs with: headless, sandbox off (root in a container), nothing that reaches the network by itself. */
const CHROMIUM_ARGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

/**
 * Launches headless Chromium from {@link CHROMIUM_PATH} through
 * playwright-core, with a fresh profile (Playwright gives every launch a
 * new temporary `--user-data-dir`). Fails loudly when the browser is not
 * installed: a browser test that skips proves nothing.
 *
 * @example
 * ```ts
 * let browser: Browser;
 * before(async () => { browser = await launchChromium(); });
 * after(() => browser.close());
 * ```
 */
export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM_PATH)) {
    throw new Error(`${CHROMIUM_PATH} is missing: install Debian's chromium package (apt-get install -y chromium); .ci/run does so as root`);
  }
  return chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: CHROMIUM_ARGS });
}
