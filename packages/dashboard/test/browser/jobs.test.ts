import { expect } from "chai";
import type { Browser, Page } from "playwright-core";
import { launchChromium } from "../support/chromium";
import { startDashboardServer, type DashboardServer } from "../support/dashboard-server";
import { enqueueJobs, makeDeadJobs, makeSucceededJobs } from "../support/seed-jobs";
import { openSignedIn } from "../support/sign-in";

describe("the jobs list and a job's page in Chromium", () => {
  let browser: Browser;
  let server: DashboardServer;
  let page: Page;
  let dead: string[];

  before(async () => {
    browser = await launchChromium();
    server = await startDashboardServer({ jobKinds: [{ name: "charge-card", secretFields: ["card.number"] }] });
    const { store, db, schema } = server.test;
    dead = await makeDeadJobs(
      store,
      "charge-card",
      3,
      (id) => `Error: card 4242424242424242 declined for job ${id}\n    at charge (billing.ts:12:5)`,
      (n) => ({ amount: 100 + n, card: { number: "4242424242424242", holder: "Ada" } }),
    );
    await makeSucceededJobs(db, schema, store, "charge-card", 6);
    await enqueueJobs(store, "charge-card", 4);
    await makeDeadJobs(store, "send-invoice", 2, () => "Error: mailbox full");
  });
  after(async () => {
    await browser?.close();
    await server?.close();
  });
  beforeEach(async () => {
    page = await browser.newPage({ timezoneId: "Asia/Tokyo" });
    await openSignedIn(page, server, "/jobs");
  });
  afterEach(async () => {
    await page.close();
  });

  async function shownIds(): Promise<string[]> {
    return page.$$eval("tr[data-job-id]", (rows) => rows.map((row) => row.getAttribute("data-job-id")!));
  }

  it("filters to the dead jobs of a queue with the form, and opens one", async () => {
    await page.fill('input[name="queue"]', "charge-card");
    await page.selectOption('select[name="state"]', "dead");
    await Promise.all([page.waitForURL(/state=dead/), page.click('button:has-text("Filter")')]);
    expect(await shownIds()).to.deep.equal([...dead].reverse());
    expect(await page.textContent("[data-summary]")).to.equal("3 jobs.");
    expect(await page.$$eval("tr[data-job-id] .state", (cells) => cells.map((cell) => cell.textContent))).to.deep.equal(["dead", "dead", "dead"]);

    await Promise.all([page.waitForURL(/\/jobs\/\d+$/), page.click(`tr[data-job-id="${dead[0]}"] a`)]);
    expect(await page.textContent("h1"))
      .to.contain(`Job ${dead[0]}`)
      .and.contain("dead");
    expect(await page.textContent("table.attempts")).to.contain("STINT_PERMANENT");
  });

  it("redacts the kind's secret fields in the payload, the error and the stack, as the logs do", async () => {
    await page.goto(`${server.url}/jobs/${dead[1]}`);
    const payload = JSON.parse((await page.textContent("[data-payload]"))!) as unknown;
    expect(payload).to.deep.equal({ amount: 101, card: { number: "[redacted]", holder: "Ada" } });
    expect(await page.textContent("[data-last-error]"))
      .to.contain("card [redacted] declined")
      .and.not.contain("4242");
    expect(await page.content()).to.not.contain("4242424242424242");
  });

  it("hides the payload of a queue whose job kind it does not know", async () => {
    const [id] = await enqueueJobs(server.test.store, "unknown-kind", 1, () => ({ apiKey: "sk_live_secret" }));
    await page.goto(`${server.url}/jobs/${id}`);
    expect(await page.textContent("[data-payload-hidden]")).to.contain('does not know the job kind of queue "unknown-kind"');
    expect(await page.content()).to.not.contain("sk_live_secret");
  });

  it("shows times in the viewer's time zone", async () => {
    await page.goto(`${server.url}/jobs/${dead[0]}`);
    const created = await page.$eval("dd time", (element) => ({ iso: element.getAttribute("datetime")!, text: element.textContent }));
    const tokyo = new Intl.DateTimeFormat("en-US", { timeZone: "Asia/Tokyo", hour: "2-digit", minute: "2-digit", hourCycle: "h23" }).format(
      new Date(created.iso),
    );
    expect(created.text).to.contain(tokyo);
    expect(await page.textContent("[data-zone]")).to.equal("Asia/Tokyo");
  });

  it("searches the last error's text and pages with a cursor, never an offset", async () => {
    await page.goto(`${server.url}/jobs?q=MAILBOX`);
    expect((await shownIds()).length).to.equal(2);
    expect(await page.textContent("[data-summary]")).to.equal("2 matching jobs on this page; jobs matched by time, error text or group are not counted.");
    await page.goto(`${server.url}/jobs?queue=charge-card`);
    expect(await page.$('a[rel="next"]'), "13 jobs fit one page").to.equal(null);
  });
});
