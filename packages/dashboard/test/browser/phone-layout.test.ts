import { expect } from "chai";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { launchChromium } from "../support/chromium";
import { startDashboardServer, TEST_TOKEN, type DashboardServer } from "../support/dashboard-server";
import { enqueueJobs, makeDeadJobs, makeRetryingJobs } from "../support/seed-jobs";
import { openSignedIn } from "../support/sign-in";

/** What a page's layout looks like at its viewport: sideways overflow, and each card's labelled fields. */
interface Measured {
  readonly documentOverflow: number;
  readonly wideElements: readonly string[];
  readonly cards: readonly { readonly display: string; readonly width: number; readonly labels: readonly string[] }[];
  readonly headerHidden: boolean;
}

async function measure(page: Page, rows: string): Promise<Measured> {
  return page.evaluate((selector) => {
    const viewport = document.documentElement.clientWidth;
    const wideElements = Array.from(document.querySelectorAll("main *"))
      .filter((element) => element.getBoundingClientRect().right > viewport + 1)
      .map((element) => `${element.tagName.toLowerCase()}.${element.className}`);
    const cards = Array.from(document.querySelectorAll(selector)).map((row) => ({
      display: getComputedStyle(row).display,
      width: row.getBoundingClientRect().width,
      labels: Array.from(row.querySelectorAll("[data-label]")).map((cell) => getComputedStyle(cell, "::before").content.replace(/^"|"$/g, "")),
    }));
    const head = document.querySelector("main thead");
    return {
      documentOverflow: document.documentElement.scrollWidth - viewport,
      wideElements,
      cards,
      headerHidden: head === null || head.getBoundingClientRect().width <= 1,
    };
  }, rows);
}

describe("the dashboard on a phone-sized screen (390 px) in Chromium", () => {
  let browser: Browser;
  let server: DashboardServer;
  let context: BrowserContext;
  let page: Page;
  let deadId: string;

  before(async () => {
    browser = await launchChromium();
    server = await startDashboardServer();
    [deadId] = (await makeDeadJobs(
      server.test.store,
      "a-queue-with-a-rather-long-name-for-a-phone",
      2,
      () => "Error: " + "very long error text ".repeat(20),
    )) as [string];
    await enqueueJobs(server.test.store, "send-invoice", 3);
    await makeRetryingJobs(server.test.store, "send-invoice", 1, "Error: SMTP 451");
  });
  after(async () => {
    await browser?.close();
    await server?.close();
  });
  beforeEach(async () => {
    context = await browser.newContext({ viewport: { width: 390, height: 844 }, deviceScaleFactor: 1 });
    page = await context.newPage();
  });
  afterEach(async () => {
    await context.close();
  });

  it("shows every job of the list as a card of labelled fields, with nothing past the screen's edge", async () => {
    await openSignedIn(page, server, "/jobs");
    const layout = await measure(page, "table.jobs tbody tr");
    expect(layout.documentOverflow, "the document scrolls sideways").to.equal(0);
    expect(layout.wideElements).to.deep.equal([]);
    expect(layout.headerHidden, "the column headings are off screen").to.equal(true);
    expect(layout.cards).to.have.length(6);
    for (const card of layout.cards) {
      expect(card.display).to.equal("block");
      expect(card.width).to.be.within(300, 390);
      expect(card.labels).to.include.members(["Id", "Queue", "State", "Attempts", "Created", "Last error", "Actions"]);
    }
  });

  it("shows every queue of the overview as a card", async () => {
    await openSignedIn(page, server, "/");
    const layout = await measure(page, "table.queues tbody tr");
    expect(layout.documentOverflow).to.equal(0);
    expect(layout.wideElements).to.deep.equal([]);
    expect(layout.cards).to.have.length(2);
    for (const card of layout.cards) {
      expect(card.display).to.equal("block");
      expect(card.labels).to.include.members(["Queue", "Queued", "Running", "Dead", "Controls", "Actions"]);
    }
  });

  it("fits a job's page to the screen", async () => {
    await openSignedIn(page, server, `/jobs/${deadId}`);
    const layout = await measure(page, "table.attempts tbody tr");
    expect(layout.documentOverflow).to.equal(0);
    expect(layout.cards.length).to.be.greaterThan(0);
  });

  it("keeps the table at 1280 px", async () => {
    await page.setViewportSize({ width: 1280, height: 800 });
    await openSignedIn(page, server, "/jobs");
    const layout = await measure(page, "table.jobs tbody tr");
    expect(layout.cards[0]?.display).to.equal("table-row");
    expect(layout.headerHidden).to.equal(false);
  });
});

describe("the dashboard's icon", () => {
  let server: DashboardServer;

  before(async () => {
    server = await startDashboardServer();
  });
  after(async () => {
    await server?.close();
  });

  it("is linked from every page and served as SVG from the assets, which the CSP allows", async () => {
    const response = await fetch(`${server.url}/`, { headers: { authorization: `Bearer ${TEST_TOKEN}` } });
    const href = /<link rel="icon" type="image\/svg\+xml" href="([^"]+)">/.exec(await response.text())?.[1];
    expect(href).to.match(/^\/assets\/favicon\.svg\?v=[0-9a-f]+$/);
    expect(response.headers.get("content-security-policy")).to.match(/img-src 'self'/);
    const icon = await fetch(`${server.origin}${href!.replace(/&amp;/g, "&")}`);
    expect(icon.status).to.equal(200);
    expect(icon.headers.get("content-type")).to.equal("image/svg+xml");
    expect(await icon.text()).to.match(/^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
    const signIn = await (await fetch(`${server.url}/login`)).text();
    expect(signIn).to.contain('rel="icon"');
  });
});
