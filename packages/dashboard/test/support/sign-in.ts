import type { Page } from "playwright-core";
import { TEST_TOKEN, type DashboardServer } from "./dashboard-server";

/**
 * Opens `path` of the dashboard, signs in on the page it answers with
 * (typing {@link TEST_TOKEN}), and waits until `path` itself shows.
 */
export async function openSignedIn(page: Page, server: DashboardServer, path = "/"): Promise<void> {
  await page.goto(`${server.url}${path}`);
  await page.fill('input[name="token"]', TEST_TOKEN);
  await page.click('button:has-text("Sign in")');
  await page.waitForSelector("header.top");
  if (page.url() !== `${server.url}${path}`) throw new Error(`signed in, but landed on ${page.url()} instead of ${server.url}${path}`);
}
