import { expect } from "chai";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { launchChromium } from "../support/chromium";
import { startDashboardServer, type DashboardServer } from "../support/dashboard-server";
import { enqueueJobs, makeDeadJobs } from "../support/seed-jobs";

const CREDENTIALS = { username: "ops", password: "correct horse battery" };

describe("the dashboard in read-only mode, in Chromium", () => {
  let browser: Browser;
  let server: DashboardServer;
  let context: BrowserContext;
  let page: Page;
  let deadId: string;
  let queuedId: string;

  before(async () => {
    browser = await launchChromium();
    server = await startDashboardServer({ readOnly: true, auth: { basicAuth: CREDENTIALS } });
    [deadId] = (await makeDeadJobs(server.test.store, "send-invoice", 1, () => "Error: mailbox full")) as [string];
    [queuedId] = (await enqueueJobs(server.test.store, "send-invoice", 1)) as [string];
  });
  after(async () => {
    await browser?.close();
    await server?.close();
  });
  beforeEach(async () => {
    context = await browser.newContext({ httpCredentials: CREDENTIALS });
    page = await context.newPage();
  });
  afterEach(async () => {
    await context.close();
  });

  it("shows no action buttons on any page", async () => {
    for (const path of [
      "/",
      `/jobs/${deadId}`,
      `/jobs/${queuedId}`,
      "/jobs?state=dead",
      "/jobs",
      "/jobs?queue=send-invoice&state=queued",
      "/jobs?queue=send-invoice&state=dead",
    ]) {
      await page.goto(`${server.url}${path}`);
      expect(await page.$$('form[method="post"]'), path).to.have.length(0);
      const buttons = await page.$$eval("button, a.button", (elements) => elements.map((element) => element.textContent?.trim()));
      expect(
        buttons.filter((label) => label !== "Filter"),
        path,
      ).to.deep.equal([]);
      expect(await page.textContent("header"), path)
        .to.contain("read-only")
        .and.contain("user:ops");
    }
  });

  it("refuses every POST, even from its own page with the credential, changing nothing", async () => {
    const authorization = `Basic ${Buffer.from(`${CREDENTIALS.username}:${CREDENTIALS.password}`).toString("base64")}`;
    await page.goto(`${server.url}/jobs/${deadId}`);
    const status = await page.evaluate(async (url) => {
      // The page has no form: post what one would carry, from the page itself (same origin, its cookies).
      const response = await fetch(url, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: "_csrf=x" });
      return response.status;
    }, `${server.url}/jobs/${deadId}/retry`);
    expect(status).to.equal(403);
    const response = await fetch(`${server.url}/queues/send-invoice/pause`, { method: "POST", headers: { authorization } });
    expect(response.status).to.equal(403);
    expect((await server.test.store.getJob({ id: deadId }))?.state).to.equal("dead");
    expect(await server.test.store.listQueueControls()).to.deep.equal([]);
  });

  it("refuses the confirmation pages of bulk actions, which would hold a form", async () => {
    const authorization = `Basic ${Buffer.from(`${CREDENTIALS.username}:${CREDENTIALS.password}`).toString("base64")}`;
    for (const path of ["/queues/send-invoice/retry-dead", "/queues/send-invoice/cancel-waiting?states=queued"]) {
      const response = await fetch(`${server.url}${path}`, { headers: { authorization } });
      expect(response.status, path).to.equal(403);
      expect(await response.text(), path).to.not.contain('method="post"');
    }
    const runNow = await fetch(`${server.url}/jobs/${queuedId}/run-now`, { method: "POST", headers: { authorization } });
    expect(runNow.status).to.equal(403);
    expect((await server.test.store.getJob({ id: queuedId }))?.state).to.equal("queued");
  });

  it("asks for the user name and password without them", async () => {
    const response = await fetch(`${server.url}/`);
    expect(response.status).to.equal(401);
    expect(response.headers.get("www-authenticate")).to.match(/^Basic realm="stint dashboard"/);
  });
});
