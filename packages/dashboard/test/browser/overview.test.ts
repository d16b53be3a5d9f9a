import { expect } from "chai";
import type { Browser, Page } from "playwright-core";
import { launchChromium } from "../support/chromium";
import { startDashboardServer, type DashboardServer } from "../support/dashboard-server";
import { enqueueJobs, makeDeadJobs, makeRetryingJobs, makeRunningJobs, makeSucceededJobs } from "../support/seed-jobs";
import { openSignedIn } from "../support/sign-in";

describe("the overview in Chromium", () => {
  let browser: Browser;
  let server: DashboardServer;
  let page: Page;

  before(async () => {
    browser = await launchChromium();
    server = await startDashboardServer({ refreshMs: 500 });
    const { store, db, schema } = server.test;
    await enqueueJobs(store, "send-invoice", 7);
    await makeRunningJobs(store, "send-invoice", 2);
    await makeDeadJobs(store, "send-invoice", 3, (id) => `Error: mailbox full for job ${id}`);
    await makeRetryingJobs(store, "send-invoice", 4, "Error: gateway timeout");
    await makeSucceededJobs(db, schema, store, "send-invoice", 25, (n) => n * 60_000);
    await makeSucceededJobs(db, schema, store, "generate-report", 5, () => 2 * 3_600_000);
    await store.setQueueControls("generate-report", { paused: true, maxRunning: 3 });
  });
  after(async () => {
    await browser?.close();
    await server?.close();
  });
  beforeEach(async () => {
    page = await browser.newPage();
    await openSignedIn(page, server);
  });
  afterEach(async () => {
    await page.close();
  });

  async function cell(queue: string, column: string): Promise<string> {
    return (await page.textContent(`tr[data-queue="${queue}"] [data-col="${column}"]`))!.trim();
  }

  it("shows each queue's counts as the database holds them", async () => {
    expect(await cell("send-invoice", "queued")).to.equal("7");
    expect(await cell("send-invoice", "due")).to.equal("7");
    expect(await cell("send-invoice", "running")).to.equal("2");
    expect(await cell("send-invoice", "retrying")).to.equal("4");
    expect(await cell("send-invoice", "dead")).to.equal("3");
    expect(await cell("send-invoice", "succeeded")).to.equal("25");
    expect(await cell("send-invoice", "oldest-due")).to.match(/^\d+ (ms|s)$/);
  });

  it("shows paused queues and their caps, and counts only the last hour as succeeded", async () => {
    expect(await cell("generate-report", "controls"))
      .to.contain("paused")
      .and.contain("max 3 running");
    expect(await cell("generate-report", "succeeded")).to.equal("0");
    expect(await page.isVisible('tr[data-queue="generate-report"] button:has-text("Resume")')).to.equal(true);
    expect(await page.isVisible('tr[data-queue="send-invoice"] button:has-text("Pause")')).to.equal(true);
  });

  it("draws the last hour's throughput as a sparkline of twelve five-minute buckets", async () => {
    const label = await page.getAttribute('tr[data-queue="send-invoice"] svg.spark', "aria-label");
    const counts = label!.split(": ").at(-1)!.split(", ").map(Number);
    expect(counts).to.have.length(12);
    expect(counts.reduce((sum, n) => sum + n, 0)).to.equal(25);
  });

  it("refreshes the counts in place, without reloading the page", async () => {
    await page.evaluate(() => ((window as unknown as { marker: string }).marker = "same page"));
    await enqueueJobs(server.test.store, "send-invoice", 5);
    await page.waitForFunction(() => document.querySelector('tr[data-queue="send-invoice"] [data-col="queued"]')?.textContent?.trim() === "12", null, {
      timeout: 10_000,
    });
    expect(await page.evaluate(() => (window as unknown as { marker?: string }).marker)).to.equal("same page");
  });
});
