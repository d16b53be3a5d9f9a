import { expect } from "chai";
import { InMemoryJobEvents, type JobEvent, type JobEventSource } from "@stint/core";
import { PostgresJobEvents } from "@stint/postgres-driver";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { launchChromium } from "../support/chromium";
import { startDashboardServer, TEST_TOKEN, type DashboardServer } from "../support/dashboard-server";
import { enqueueJobs, makeDeadJobs } from "../support/seed-jobs";
import { openSignedIn } from "../support/sign-in";

/** A job event without its time, for each of the union's members (a plain `Omit` would keep only the fields they share). */
type UnstampedJobEvent = JobEvent extends infer E ? (E extends JobEvent ? Omit<E, "at"> : never) : never;

const WORKER = "another-process";

/** Polls `check` until it holds or `timeoutMs` passes. */
async function eventually(check: () => Promise<boolean> | boolean, timeoutMs = 10_000, what = "the condition"): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe("live updates in Chromium", () => {
  let browser: Browser;

  before(async () => {
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
  });

  describe("from the event stream", () => {
    let server: DashboardServer;
    let events: InMemoryJobEvents;
    let page: Page;

    before(async () => {
      events = new InMemoryJobEvents();
      // Polling once an hour: whatever changes on the page within a test came through the stream.
      server = await startDashboardServer({ events, refreshMs: 3_600_000 });
    });
    after(async () => {
      await server?.close();
    });
    beforeEach(async () => {
      page = await browser.newPage();
    });
    afterEach(async () => {
      await page.close();
    });

    function publish(event: UnstampedJobEvent): void {
      events.publish({ ...event, at: new Date() });
    }

    it("changes an open job's page when another process runs it, without a reload", async () => {
      const [id] = (await enqueueJobs(server.test.store, "live-job", 1)) as [string];
      await openSignedIn(page, server, `/jobs/${id}`);
      await page.waitForSelector('#job-live[data-live="events"]');
      const loads: string[] = [];
      page.on("load", () => loads.push(page.url()));
      expect(await page.textContent("h1 .state")).to.equal("queued");

      const [claimed] = await server.test.store.claimBatch({ queue: "live-job", workerId: WORKER, limit: 1, leaseMs: 60_000 });
      publish({ type: "started", jobId: id, queue: "live-job", attempt: 1 });
      await page.waitForFunction(() => document.querySelector("h1 .state")?.textContent === "running");

      await server.test.store.completeJobs({
        workerId: WORKER,
        jobs: [{ id, attempt: claimed!.attempt, resultJson: JSON.stringify({ sent: 3 }), durationMs: 5 }],
      });
      publish({ type: "succeeded", jobId: id, queue: "live-job", attempt: 1 });
      await page.waitForFunction(() => document.querySelector("h1 .state")?.textContent === "succeeded");
      expect(await page.textContent("[data-result]")).to.contain('"sent": 3');
      expect(loads, "the page was not reloaded").to.deep.equal([]);
      expect(await page.isHidden("[data-stale]")).to.equal(true);
    });

    it("changes the overview's counts when jobs are enqueued elsewhere", async () => {
      await enqueueJobs(server.test.store, "live-overview", 1);
      await openSignedIn(page, server, "/");
      await page.waitForSelector('#overview[data-live="events"]');
      expect(await page.textContent('tr[data-queue="live-overview"] [data-col="queued"]')).to.equal("1");
      const ids = await enqueueJobs(server.test.store, "live-overview", 4);
      for (const jobId of ids) publish({ type: "enqueued", jobId, queue: "live-overview", attempt: 0 });
      await page.waitForFunction(() => document.querySelector('tr[data-queue="live-overview"] [data-col="queued"]')?.textContent === "5");
    });

    it("streams text/event-stream to a signed-in viewer only, and lets go of the subscription when the client goes", async () => {
      expect((await fetch(`${server.url}/events`)).status).to.equal(401);
      const before = events.subscribers;
      const abort = new AbortController();
      const response = await fetch(`${server.url}/events?queues=stream-check`, { headers: { authorization: `Bearer ${TEST_TOKEN}` }, signal: abort.signal });
      expect(response.status).to.equal(200);
      expect(response.headers.get("content-type")).to.equal("text/event-stream; charset=utf-8");
      const reader = response.body!.getReader();
      const decoder = new TextDecoder();
      let text = "";
      const readUntil = async (needle: string) => {
        while (!text.includes(needle)) {
          const { value, done } = await reader.read();
          if (done) throw new Error(`the stream ended before ${needle}`);
          text += decoder.decode(value, { stream: true });
        }
      };
      await readUntil("event: ready");
      expect(events.subscribers).to.equal(before + 1);
      publish({ type: "dead", jobId: "41", queue: "other-queue", attempt: 3 });
      publish({ type: "dead", jobId: "42", queue: "stream-check", attempt: 3 });
      await readUntil('"jobId":"42"');
      expect(text).to.not.contain('"jobId":"41"');
      expect(text).to.match(/event: job\ndata: \{"type":"dead","jobId":"42","queue":"stream-check","attempt":3,"at":"[^"]+"\}\n\n/);
      events.reportGap({ reason: "reconnected" });
      await readUntil("event: gap");
      abort.abort();
      await eventually(() => events.subscribers === before, 5_000, "the subscription to close");
    });

    it("refuses a malformed stream filter with 400", async () => {
      const response = await fetch(`${server.url}/events?job=not-a-job`, { headers: { authorization: `Bearer ${TEST_TOKEN}` } });
      expect(response.status).to.equal(400);
    });
  });

  describe("from PostgreSQL's notifications", () => {
    let server: DashboardServer;
    let events: PostgresJobEvents | undefined;
    let page: Page;

    before(async () => {
      // The schema is made with the server; the source is opened on it once its name is known.
      const source: JobEventSource = { subscribe: (filter, handlers) => events!.subscribe(filter, handlers) };
      server = await startDashboardServer({ events: source, refreshMs: 3_600_000 });
      events = new PostgresJobEvents({ connectionString: server.test.connectionString, schema: server.test.schema });
      page = await browser.newPage();
    });
    after(async () => {
      await page?.close();
      await events?.close();
      await server?.close();
    });

    it("follows a job that another connection claims and kills, on its page and on the overview", async () => {
      const [id] = (await enqueueJobs(server.test.store, "pg-live", 1)) as [string];
      await openSignedIn(page, server, `/jobs/${id}`);
      await page.waitForSelector('#job-live[data-live="events"]');
      const loads: string[] = [];
      page.on("load", () => loads.push(page.url()));
      const [claimed] = await server.test.store.claimBatch({ queue: "pg-live", workerId: WORKER, limit: 1, leaseMs: 60_000 });
      await page.waitForFunction(() => document.querySelector("h1 .state")?.textContent === "running", undefined, { timeout: 10_000 });
      await server.test.store.markJobsDead({
        workerId: WORKER,
        jobs: [{ id, attempt: claimed!.attempt, failure: { message: "Error: printer on fire", code: "STINT_PERMANENT" } }],
      });
      await page.waitForFunction(() => document.querySelector("h1 .state")?.textContent === "dead", undefined, { timeout: 10_000 });
      expect(await page.textContent("[data-last-error]")).to.contain("printer on fire");
      expect(loads, "the page was not reloaded").to.deep.equal([]);

      await page.goto(`${server.url}/`);
      await page.waitForSelector('#overview[data-live="events"]');
      expect(await page.textContent('tr[data-queue="pg-live"] [data-col="dead"]')).to.equal("1");
      await makeDeadJobs(server.test.store, "pg-live", 2, () => "Error: again");
      await page.waitForFunction(() => document.querySelector('tr[data-queue="pg-live"] [data-col="dead"]')?.textContent === "3", undefined, {
        timeout: 10_000,
      });
    });
  });

  describe("when updates stop", () => {
    let server: DashboardServer;
    let context: BrowserContext;
    let page: Page;

    beforeEach(async () => {
      server = await startDashboardServer({ refreshMs: 500 });
      await enqueueJobs(server.test.store, "stale-check", 2);
      context = await browser.newContext();
      page = await context.newPage();
    });
    afterEach(async () => {
      await context.close();
      await server.close();
    });

    it("says the server cannot be reached when it has gone, instead of showing old figures as current", async () => {
      await openSignedIn(page, server, "/");
      await page.waitForSelector("#overview[data-refreshed]");
      expect(await page.isHidden("[data-stale]")).to.equal(true);
      await server.stopServing();
      await page.waitForSelector("[data-stale]:not([hidden])");
      expect(await page.textContent("[data-stale]")).to.match(
        /^Updates stopped: the dashboard server cannot be reached\. Trying again\. The figures below are from \d\d:\d\d:\d\d\.$/,
      );
      expect(await page.getAttribute("#overview", "class")).to.contain("is-stale");
      await page.waitForFunction(() => /Updated \d+ s ago/.test(document.querySelector("#overview .note")?.textContent ?? ""), undefined, { timeout: 10_000 });
    });

    it("says the viewer is signed out when a refresh answers 401, and stops asking", async () => {
      await openSignedIn(page, server, "/");
      await page.waitForSelector("#overview[data-refreshed]");
      await context.clearCookies();
      await page.waitForSelector("[data-stale]:not([hidden])");
      expect(await page.textContent("[data-stale]")).to.contain("Updates stopped: you are signed out (the server answered 401).");
      expect(await page.getAttribute("#overview", "data-stale-status")).to.equal("401");
    });

    it("says the database did not answer when a refresh gets 503, and clears the banner once one succeeds", async () => {
      await openSignedIn(page, server, "/");
      await page.waitForSelector("#overview[data-refreshed]");
      // The dashboard answers 503 when its database does not; the browser is made to see exactly that answer.
      await page.route("**/fragments/overview", (route) =>
        route.fulfill({ status: 503, contentType: "text/html", body: "<p>The database did not answer.</p>" }),
      );
      await page.waitForSelector("[data-stale]:not([hidden])");
      expect(await page.textContent("[data-stale]")).to.match(/^Updates stopped: the database did not answer \(503\)\. Trying again\./);
      await page.unroute("**/fragments/overview");
      await page.waitForSelector("[data-stale][hidden]", { state: "attached" });
      expect(await page.getAttribute("#overview", "class")).to.not.contain("is-stale");
    });

    it("shows a job page going stale too", async () => {
      const [id] = await enqueueJobs(server.test.store, "stale-check", 1);
      await openSignedIn(page, server, `/jobs/${id}`);
      await page.waitForSelector("#job-live[data-refreshed]");
      await server.stopServing();
      await page.waitForSelector("[data-stale]:not([hidden])");
      expect(await page.textContent("[data-stale]")).to.contain("the dashboard server cannot be reached");
    });
  });
});
