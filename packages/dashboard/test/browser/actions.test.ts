import { expect } from "chai";
import type { Browser, Page } from "playwright-core";
import { launchChromium } from "../support/chromium";
import { startDashboardServer, TEST_TOKEN, type DashboardServer } from "../support/dashboard-server";
import { enqueueJobs, makeDeadJobs, makeRetryingJobs, makeRunningJobs } from "../support/seed-jobs";
import { openSignedIn } from "../support/sign-in";

describe("actions from the dashboard in Chromium", () => {
  let browser: Browser;
  let server: DashboardServer;
  let page: Page;

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
    page.on("dialog", (dialog) => void dialog.accept());
  });
  afterEach(async () => {
    await page.close();
  });

  it("retries a dead job from its page, and the database has it queued", async () => {
    const [id] = await makeDeadJobs(server.test.store, "send-invoice", 1, () => "Error: mailbox full");
    await openSignedIn(page, server, `/jobs/${id}`);
    await Promise.all([page.waitForURL(/done=retried/), page.click('button:has-text("Retry now")')]);
    expect(await page.textContent(".flash")).to.contain("queued to run again");
    const job = await server.test.store.getJob({ id: id! });
    expect(job?.state).to.equal("queued");
    const logged = server.log.find((line) => line.fields?.["action"] === "retry-job");
    expect(logged?.fields).to.include({ jobId: id, queue: "send-invoice", remoteAddress: "127.0.0.1" });
    expect(logged?.fields?.["who"]).to.match(/^token:[0-9a-f]{8}$/);
    expect(logged?.message).to.match(/^Dashboard: token:[0-9a-f]{8} retried job \d+ \(send-invoice\)$/);
  });

  it("cancels a queued job after the confirmation", async () => {
    const [id] = await enqueueJobs(server.test.store, "send-invoice", 1);
    await openSignedIn(page, server, `/jobs/${id}`);
    await Promise.all([page.waitForURL(/done=cancelled/), page.click('button:has-text("Cancel")')]);
    expect((await server.test.store.getJob({ id: id! }))?.state).to.equal("cancelled");
  });

  it("cancels a running job after a confirmation that says its handler is told to stop", async () => {
    const [id] = await makeRunningJobs(server.test.store, "render-video", 1);
    const asked: string[] = [];
    page.on("dialog", (dialog) => void asked.push(dialog.message()));
    await openSignedIn(page, server, `/jobs/${id}`);
    await Promise.all([page.waitForURL(/done=cancelled/), page.click('button:has-text("Cancel")')]);
    expect(asked).to.deep.equal([`Cancel job ${id}? It is running: its handler is told to stop now.`]);
    expect((await server.test.store.getJob({ id: id! }))?.state).to.equal("cancelled");
    expect((await server.test.store.listAttempts({ jobId: id! })).map((attempt) => attempt.outcome)).to.deep.equal(["cancelled"]);
  });

  it("retries every dead job of a queue after a confirmation that states the count", async () => {
    const ids = await makeDeadJobs(server.test.store, "render-pdf", 4, () => "Error: font missing");
    await openSignedIn(page, server);
    await Promise.all([page.waitForURL(/retry-dead$/), page.click('tr[data-queue="render-pdf"] a:has-text("Retry dead")')]);
    expect(await page.textContent("[data-confirm-count]")).to.contain("Run 4 dead jobs of queue render-pdf again now");
    await Promise.all([page.waitForURL(/done=retried-dead/), page.click('button:has-text("Retry 4 jobs")')]);
    expect(await page.textContent(".flash")).to.contain("4 dead jobs of render-pdf queued to run again now");
    for (const id of ids) expect((await server.test.store.getJob({ id }))?.state).to.equal("queued");
  });

  it("cancels a queue's waiting jobs after a confirmation that states the count, leaving its running job alone", async () => {
    const retrying = await makeRetryingJobs(server.test.store, "export-csv", 2, "Error: disk full");
    const [running] = await makeRunningJobs(server.test.store, "export-csv", 1);
    const queued = await enqueueJobs(server.test.store, "export-csv", 3);
    await openSignedIn(page, server);
    await Promise.all([page.waitForURL(/cancel-waiting$/), page.click('tr[data-queue="export-csv"] a:has-text("Cancel waiting")')]);
    expect(await page.textContent("[data-confirm-count]")).to.contain("Cancel 5 waiting jobs of queue export-csv?");
    await Promise.all([page.waitForURL(/states=queued$/), page.click('a[href$="states=queued"]')]);
    expect(await page.textContent("[data-confirm-count]")).to.contain("Cancel 3 queued jobs of queue export-csv?");
    await Promise.all([page.waitForURL(/done=cancelled-waiting/), page.click('button:has-text("Cancel 3 jobs")')]);
    expect(await page.textContent(".flash")).to.contain("3 waiting jobs of export-csv cancelled");
    for (const id of queued) expect((await server.test.store.getJob({ id }))?.state).to.equal("cancelled");
    for (const id of retrying) expect((await server.test.store.getJob({ id }))?.state).to.equal("failed");
    expect((await server.test.store.getJob({ id: running! }))?.state).to.equal("running");
    const logged = server.log.find((line) => line.fields?.["action"] === "cancel-waiting");
    expect(logged?.fields).to.include({ queue: "export-csv", jobs: 3, remoteAddress: "127.0.0.1" });
    expect(logged?.message).to.match(/^Dashboard: token:[0-9a-f]{8} cancelled 3 queued jobs of export-csv$/);
  });

  it("pauses and resumes a queue", async () => {
    await enqueueJobs(server.test.store, "resize-image", 1);
    await openSignedIn(page, server);
    await Promise.all([page.waitForURL(/done=paused/), page.click('tr[data-queue="resize-image"] button:has-text("Pause")')]);
    expect(await page.textContent('tr[data-queue="resize-image"] [data-col="controls"]')).to.contain("paused");
    expect((await server.test.store.listQueueControls()).find((entry) => entry.queue === "resize-image")?.paused).to.equal(true);
    await Promise.all([page.waitForURL(/done=resumed/), page.click('tr[data-queue="resize-image"] button:has-text("Resume")')]);
    expect((await server.test.store.listQueueControls()).find((entry) => entry.queue === "resize-image")?.paused).to.equal(false);
  });

  describe("refused with 403, changing nothing", () => {
    let id: string;
    let csrf: { cookie: string; token: string };

    beforeEach(async () => {
      [id] = (await makeDeadJobs(server.test.store, "send-invoice", 1, () => "Error: mailbox full")) as [string];
      // A real page's CSRF cookie and token, read as a browser would get them.
      const response = await fetch(`${server.url}/jobs/${id}`, { headers: { authorization: `Bearer ${TEST_TOKEN}` } });
      const cookie = response.headers
        .getSetCookie()
        .find((line) => line.startsWith("stint_dashboard_csrf="))!
        .split(";")[0]!;
      const token = /name="_csrf" value="([^"]+)"/.exec(await response.text())![1]!;
      csrf = { cookie, token };
    });

    async function post(headers: Record<string, string>, body: string): Promise<number> {
      const response = await fetch(`${server.url}/jobs/${id}/retry`, {
        method: "POST",
        redirect: "manual",
        headers: { "content-type": "application/x-www-form-urlencoded", ...headers },
        body,
      });
      expect(await response.text()).to.not.match(/\bat .+\.js:\d+/);
      return response.status;
    }

    async function stillDead(): Promise<void> {
      expect((await server.test.store.getJob({ id }))?.state).to.equal("dead");
    }

    it("without the credential", async () => {
      expect(await post({ cookie: csrf.cookie }, `_csrf=${csrf.token}`)).to.equal(403);
      await stillDead();
    });

    it("with a wrong credential", async () => {
      expect(await post({ cookie: csrf.cookie, authorization: "Bearer wrong-token-0123456789" }, `_csrf=${csrf.token}`)).to.equal(403);
      await stillDead();
    });

    it("without the CSRF token, or with another browser's", async () => {
      const auth = { authorization: `Bearer ${TEST_TOKEN}` };
      expect(await post({ ...auth, cookie: csrf.cookie }, "")).to.equal(403);
      expect(await post(auth, `_csrf=${csrf.token}`)).to.equal(403);
      expect(await post({ ...auth, cookie: "stint_dashboard_csrf=another-browsers-nonce-123" }, `_csrf=${csrf.token}`)).to.equal(403);
      await stillDead();
    });

    it("from a page of another site, even with the token", async () => {
      const headers = { authorization: `Bearer ${TEST_TOKEN}`, cookie: csrf.cookie, origin: "https://evil.example" };
      expect(await post(headers, `_csrf=${csrf.token}`)).to.equal(403);
      await stillDead();
    });

    it("and accepted with both, as the control", async () => {
      expect(await post({ authorization: `Bearer ${TEST_TOKEN}`, cookie: csrf.cookie }, `_csrf=${csrf.token}`)).to.equal(303);
      expect((await server.test.store.getJob({ id }))?.state).to.equal("queued");
    });
  });
});
