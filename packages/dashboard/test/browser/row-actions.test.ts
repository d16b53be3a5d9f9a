import { expect } from "chai";
import { defineJob } from "@stint/core";
import { buildNewJob } from "@stint/core/driver";
import type { Browser, Page } from "playwright-core";
import { launchChromium } from "../support/chromium";
import { startDashboardServer, type DashboardServer } from "../support/dashboard-server";
import { enqueueJobs, makeDeadJobs, makeRetryingJobs } from "../support/seed-jobs";
import { openSignedIn } from "../support/sign-in";

describe("actions on the jobs list in Chromium", () => {
  let browser: Browser;
  let server: DashboardServer;
  let page: Page;
  let asked: string[];

  before(async () => {
    browser = await launchChromium();
    server = await startDashboardServer();
  });
  after(async () => {
    await browser?.close();
    await server?.close();
  });
  beforeEach(async () => {
    page = await browser.newPage();
    asked = [];
    page.on("dialog", (dialog) => {
      asked.push(dialog.message());
      void dialog.accept();
    });
  });
  afterEach(async () => {
    await page.close();
  });

  async function scheduleJob(queue: string, inMs: number): Promise<string> {
    const [result] = await server.test.store.enqueueMany([buildNewJob(defineJob<object>(queue), {}, { runAt: new Date(Date.now() + inMs) })]);
    return result!.id;
  }

  it("retries a dead job from its row and comes back to the same filtered list", async () => {
    const [id] = await makeDeadJobs(server.test.store, "row-retry", 1, () => "Error: mailbox full");
    await openSignedIn(page, server, "/jobs?queue=row-retry&state=dead");
    await Promise.all([page.waitForURL(/done=retried/), page.click(`tr[data-job-id="${id}"] button:has-text("Retry")`)]);
    const url = new URL(page.url());
    expect(url.pathname).to.equal("/jobs");
    expect(url.searchParams.get("queue")).to.equal("row-retry");
    expect(url.searchParams.get("state")).to.equal("dead");
    expect(await page.textContent(".flash")).to.contain("queued to run again");
    expect((await server.test.store.getJob({ id: id! }))?.state).to.equal("queued");
  });

  it("cancels a queued job from its row after a confirmation", async () => {
    const [id] = await enqueueJobs(server.test.store, "row-cancel", 1);
    await openSignedIn(page, server, "/jobs?queue=row-cancel");
    await Promise.all([page.waitForURL(/done=cancelled/), page.click(`tr[data-job-id="${id}"] button:has-text("Cancel")`)]);
    expect(asked).to.deep.equal([`Cancel job ${id}?`]);
    expect((await server.test.store.getJob({ id: id! }))?.state).to.equal("cancelled");
  });

  it("shows when a scheduled job runs, and runs it now from its row", async () => {
    const id = await scheduleJob("row-run-now", 3_600_000);
    const [due] = await enqueueJobs(server.test.store, "row-run-now", 1);
    await openSignedIn(page, server, "/jobs?queue=row-run-now&state=queued");
    const runAt = await page.getAttribute(`tr[data-job-id="${id}"] [data-col="run-at"] time`, "datetime");
    expect(new Date(runAt!).getTime()).to.be.greaterThan(Date.now() + 3_000_000);
    expect(await page.textContent(`tr[data-job-id="${id}"]`)).to.contain("scheduled");
    expect(await page.$$(`tr[data-job-id="${due}"] button:has-text("Run now")`), "a job due already has no run-now").to.have.length(0);
    await Promise.all([page.waitForURL(/done=ran-now/), page.click(`tr[data-job-id="${id}"] button:has-text("Run now")`)]);
    expect(await page.textContent(".flash")).to.contain("due now");
    const job = await server.test.store.getJob({ id });
    expect(job?.state).to.equal("queued");
    expect(job!.runAt.getTime()).to.be.at.most(Date.now() + 1_000);
    expect(job!.attempts).to.equal(0);
    expect(server.log.find((line) => line.fields?.["action"] === "run-job-now")?.fields).to.include({ jobId: id, queue: "row-run-now" });
  });

  it("lists only the jobs scheduled for later with the scheduled filter, and offers no bulk action for them", async () => {
    const later = await scheduleJob("scheduled-filter", 7_200_000);
    const [due] = await enqueueJobs(server.test.store, "scheduled-filter", 2);
    await openSignedIn(page, server, "/jobs?queue=scheduled-filter");
    await Promise.all([
      page.waitForURL(/state=scheduled/),
      page.selectOption('select[name="state"]', "scheduled").then(() => page.click('button:has-text("Filter")')),
    ]);
    expect(await page.$$eval("tr[data-job-id]", (rows) => rows.map((row) => row.getAttribute("data-job-id")))).to.deep.equal([later]);
    expect(await page.$eval('select[name="state"]', (select) => (select as HTMLSelectElement).value)).to.equal("scheduled");
    expect(await page.$$("[data-bulk]")).to.have.length(0);
    expect((await server.test.store.getJob({ id: due! }))?.state).to.equal("queued");
  });

  it("runs a retrying job now from its page", async () => {
    const [id] = await makeRetryingJobs(server.test.store, "page-run-now", 1, "Error: SMTP 451");
    await openSignedIn(page, server, `/jobs/${id}`);
    await Promise.all([page.waitForURL(/done=ran-now/), page.click('button:has-text("Run now")')]);
    const job = await server.test.store.getJob({ id: id! });
    expect(job?.state).to.equal("failed");
    expect(job!.runAt.getTime()).to.be.at.most(Date.now() + 1_000);
  });

  it("answers 409 to run-now for a job that is not waiting, and keeps a foreign back link out of the redirect", async () => {
    const [dead] = await makeDeadJobs(server.test.store, "row-conflict", 1, () => "Error: gone");
    const [queued] = await enqueueJobs(server.test.store, "row-conflict", 1);
    await openSignedIn(page, server, "/jobs?queue=row-conflict");
    const token = await page.getAttribute('input[name="_csrf"]', "value");
    const post = (path: string, back: string) =>
      page.evaluate(
        async ([url, body]) => {
          const response = await fetch(url!, { method: "POST", redirect: "manual", headers: { "content-type": "application/x-www-form-urlencoded" }, body });
          return { status: response.status, type: response.type };
        },
        [`${server.url}${path}`, new URLSearchParams({ _csrf: token!, back }).toString()],
      );
    expect((await post(`/jobs/${dead}/run-now`, "/jobs")).status).to.equal(409);
    expect((await server.test.store.getJob({ id: dead! }))?.state).to.equal("dead");
    // A back link to another site is ignored: the redirect goes to the job's own page.
    await Promise.all([
      page.waitForURL(/\/jobs\/\d+\?done=cancelled$/),
      page.evaluate((queuedId) => {
        const form = document.querySelector(`tr[data-job-id="${queuedId}"] form[action$="/cancel"]`) as HTMLFormElement;
        (form.querySelector('input[name="back"]') as HTMLInputElement).value = "//evil.example/jobs";
        form.removeAttribute("data-confirm");
        form.submit();
      }, queued!),
    ]);
    expect(new URL(page.url()).origin).to.equal(server.origin);
    expect((await server.test.store.getJob({ id: queued! }))?.state).to.equal("cancelled");
  });

  it("cancels exactly the filtered set after a confirmation that states the count", async () => {
    const retrying = await makeRetryingJobs(server.test.store, "bulk-cancel", 2, "Error: later");
    const queued = await enqueueJobs(server.test.store, "bulk-cancel", 3);
    const [other] = await enqueueJobs(server.test.store, "bulk-other", 1);
    await openSignedIn(page, server, "/jobs?queue=bulk-cancel&state=queued");
    expect(await page.textContent("[data-summary]")).to.contain("3 jobs");
    await Promise.all([page.waitForURL(/cancel-waiting\?states=queued$/), page.click('[data-bulk] a:has-text("Cancel all queued jobs of bulk-cancel")')]);
    expect(await page.textContent("[data-confirm-count]")).to.contain("Cancel 3 queued jobs of queue bulk-cancel?");
    for (const id of queued) expect((await server.test.store.getJob({ id }))?.state, "nothing changes before the confirmation").to.equal("queued");
    await Promise.all([page.waitForURL(/done=cancelled-waiting/), page.click('button:has-text("Cancel 3 jobs")')]);
    for (const id of queued) expect((await server.test.store.getJob({ id }))?.state).to.equal("cancelled");
    for (const id of retrying) expect((await server.test.store.getJob({ id }))?.state).to.equal("failed");
    expect((await server.test.store.getJob({ id: other! }))?.state).to.equal("queued");
  });

  it("offers no bulk action when the filter narrows the set further than a queue-wide action could", async () => {
    await makeDeadJobs(server.test.store, "bulk-narrow", 2, () => "Error: narrow");
    await openSignedIn(page, server, "/jobs?queue=bulk-narrow&state=dead");
    expect(await page.$$("[data-bulk]")).to.have.length(1);
    await page.goto(`${server.url}/jobs?queue=bulk-narrow&state=dead&q=narrow`);
    expect(await page.$$("[data-bulk]")).to.have.length(0);
    await page.goto(`${server.url}/jobs?state=dead`);
    expect(await page.$$("[data-bulk]")).to.have.length(0);
  });
});
