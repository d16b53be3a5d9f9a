import { expect } from "chai";
import { newJob } from "@stint/core/testing";
import type { Browser, Page } from "playwright-core";
import { launchChromium } from "../support/chromium";
import { startDashboardServer, type DashboardServer, TEST_TOKEN } from "../support/dashboard-server";
import { openSignedIn } from "../support/sign-in";

/** A group key that is markup: the pages must show it as text. */
const MARKUP = '<img src=x onerror="window.pwned = 1">';

describe("groups and serial lines on the dashboard, in Chromium", () => {
  let browser: Browser;
  let server: DashboardServer;
  let page: Page;
  let acme: string;
  let heldBy: string;

  before(async () => {
    browser = await launchChromium();
    server = await startDashboardServer();
    const { store } = server.test;
    const jobs = await store.enqueueMany([
      newJob("sync", { n: 1 }, { groupKey: "acme" }),
      newJob("sync", { n: 2 }, { groupKey: "acme" }),
      newJob("sync", { n: 3 }, { groupKey: "acme" }),
    ]);
    acme = jobs[0]!.id;
    await store.claimBatch({ queue: "sync", workerId: "w", limit: 2, leaseMs: 60_000 });
    await store.enqueueMany([newJob("sync", { n: 4 }, { groupKey: MARKUP }), newJob("sync", { n: 5 })]);
    await store.setQueueControls("sync", { maxRunningPerGroup: 2 });
    await store.enqueueMany([1, 2].map((n) => newJob("ledger", { n }, { groupKey: "acct-1", serial: "hold" })));
    const [head] = await store.claimBatch({ queue: "ledger", workerId: "w", limit: 5, leaseMs: 60_000 });
    await store.markJobsDead({ workerId: "w", jobs: [{ id: head!.id, attempt: head!.attempt, failure: { message: "Error: gone", code: null } }] });
    heldBy = head!.id;
  });
  after(async () => {
    await browser?.close();
    await server?.close();
  });
  beforeEach(async () => {
    page = await browser.newPage();
  });
  afterEach(async () => {
    await page.close();
  });

  it("shows a job's group, linked to the list of its group's jobs", async () => {
    await openSignedIn(page, server, `/jobs/${acme}`);
    const link = page.locator("dl.fields a[data-group]");
    expect(await link.textContent()).to.equal("acme");
    await link.click();
    await page.waitForURL(/group=acme/);
    expect(await page.textContent("h1")).to.equal("Jobs of sync, group acme");
    const rows = await page.$$eval("table.jobs tbody tr", (trs) => trs.map((tr) => tr.getAttribute("data-job-id")));
    expect(rows).to.have.length(3);
    expect(await page.inputValue('input[name="group"]')).to.equal("acme");
    expect(await page.$("[data-bulk]"), "no queue-wide action on a group's page").to.equal(null);
  });

  it("shows a queue's cap per group and its busiest groups, keys as text, each linked to its jobs", async () => {
    await openSignedIn(page, server, "/jobs?queue=sync");
    expect(await page.textContent("[data-max-running-per-group]")).to.equal("2");
    const rows = await page.$$eval("table.groups tbody tr", (trs) =>
      trs.map((tr) => Array.from(tr.querySelectorAll("td"), (td) => td).map((td) => td.textContent?.trim())),
    );
    expect(rows).to.deep.equal([
      ["acme", "2", "1", "–"],
      [MARKUP, "0", "1", "–"],
    ]);
    expect(await page.evaluate(() => (window as unknown as { pwned?: number }).pwned)).to.equal(undefined);
    expect(await page.$$("main img")).to.have.length(0);
    expect(await page.$$eval("table.jobs td[data-col=group]", (tds) => tds.map((td) => td.textContent?.trim()))).to.include(MARKUP);
    await page.click(`table.groups a[data-group]:text-is(${JSON.stringify(MARKUP)})`);
    await page.waitForURL(/group=/);
    expect(await page.$$eval("table.jobs tbody tr", (trs) => trs.length)).to.equal(1);
  });

  it("shows a held line with the dead job that holds it, and the cap on the overview", async () => {
    await openSignedIn(page, server, "/jobs?queue=ledger");
    expect(await page.textContent("table.groups tbody tr")).to.contain("line acct-1");
    expect(await page.getAttribute("table.groups a[data-held-by]", "href")).to.match(new RegExp(`/jobs/${heldBy}$`));
    await page.goto(`${server.url}/`);
    expect(await page.textContent('tr[data-queue="sync"] [data-col="controls"]')).to.contain("max 2 per group");
  });

  it("refuses a group filter without a queue, naming the field", async () => {
    const response = await fetch(`${server.url}/jobs?group=acme`, { headers: { authorization: `Bearer ${TEST_TOKEN}` } });
    expect(response.status).to.equal(400);
    expect(await response.text()).to.contain("group");
  });
});
