import { expect } from "chai";
import type { Browser, Page } from "playwright-core";
import { launchChromium } from "../support/chromium";
import { startDashboardServer, type DashboardServer } from "../support/dashboard-server";
import { enqueueJobs } from "../support/seed-jobs";
import { openSignedIn } from "../support/sign-in";

describe("paging the jobs list both ways in Chromium", () => {
  let browser: Browser;
  let server: DashboardServer;
  let page: Page;
  let ids: string[];

  before(async () => {
    browser = await launchChromium();
    server = await startDashboardServer();
    ids = (await enqueueJobs(server.test.store, "paged", 120)).sort((a, b) => Number(b) - Number(a));
    page = await browser.newPage();
  });
  after(async () => {
    await browser?.close();
    await server?.close();
  });

  const shown = () => page.$$eval("tr[data-job-id]", (rows) => rows.map((row) => row.getAttribute("data-job-id")));

  it("goes to older pages and back to newer ones, keeping the filter", async () => {
    await openSignedIn(page, server, "/jobs?queue=paged");
    expect(await shown()).to.deep.equal(ids.slice(0, 50));
    expect(await page.$$('[data-page="newer"]'), "the newest page has no newer link").to.have.length(0);
    await Promise.all([page.waitForURL(/before=/), page.click('[data-page="older"]')]);
    expect(await shown()).to.deep.equal(ids.slice(50, 100));
    await Promise.all([page.waitForURL(/before=/), page.click('[data-page="older"]')]);
    expect(await shown()).to.deep.equal(ids.slice(100));
    expect(await page.$$('[data-page="older"]'), "the oldest page has no older link").to.have.length(0);
    await Promise.all([page.waitForURL(/after=/), page.click('[data-page="newer"]')]);
    expect(await shown()).to.deep.equal(ids.slice(50, 100));
    expect(new URL(page.url()).searchParams.get("queue")).to.equal("paged");
    await Promise.all([page.waitForURL(/after=/), page.click('[data-page="newer"]')]);
    expect(await shown()).to.deep.equal(ids.slice(0, 50));
    await Promise.all([page.waitForURL((url) => !url.search.includes("after=") && !url.search.includes("before=")), page.click('[data-page="newest"]')]);
    expect(await shown()).to.deep.equal(ids.slice(0, 50));
  });
});
