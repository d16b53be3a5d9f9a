import { expect } from "chai";
import type { Browser, Page } from "playwright-core";
import { launchChromium } from "../support/chromium";
import { startDashboardServer, type DashboardServer } from "../support/dashboard-server";
import { makeDeadJobs } from "../support/seed-jobs";
import { openSignedIn } from "../support/sign-in";

const SCRIPT = '<script>window.pwned = "payload"</script>';
const IMAGE = "<img src=x onerror=\"window.pwned = 'error'\">";

describe("HTML in payloads and errors, in Chromium", () => {
  let browser: Browser;
  let server: DashboardServer;
  let page: Page;
  let id: string;
  const dialogs: string[] = [];

  before(async () => {
    browser = await launchChromium();
    server = await startDashboardServer({ payloads: "all" });
    [id] = (await makeDeadJobs(
      server.test.store,
      "send-invoice",
      1,
      () => `Error: ${IMAGE} ${SCRIPT}\n    at render (${SCRIPT}:1:1)`,
      () => ({
        note: SCRIPT,
        [SCRIPT]: IMAGE,
      }),
    )) as [string];
  });
  after(async () => {
    await browser?.close();
    await server?.close();
  });
  beforeEach(async () => {
    page = await browser.newPage();
    page.on("dialog", (dialog) => {
      dialogs.push(dialog.message());
      void dialog.dismiss();
    });
  });
  afterEach(async () => {
    await page.close();
  });

  for (const [name, path] of [
    ["the job's page", () => `/jobs/${id}`],
    ["the jobs list", () => "/jobs?state=dead"],
    ["a search for the markup itself", () => `/jobs?q=${encodeURIComponent("<img")}`],
  ] as const) {
    it(`shows it as text on ${name} and never runs it`, async () => {
      await openSignedIn(page, server, path());
      await page.waitForLoadState("load");
      expect(await page.evaluate(() => (window as unknown as { pwned?: string }).pwned)).to.equal(undefined);
      expect(await page.$$("main script, main img")).to.have.length(0);
      expect(await page.textContent("main")).to.contain("<img src=x onerror=");
      expect(dialogs).to.deep.equal([]);
    });
  }

  it("shows the payload's keys and values exactly, as text", async () => {
    await openSignedIn(page, server, `/jobs/${id}`);
    expect(JSON.parse((await page.textContent("[data-payload]"))!)).to.deep.equal({ note: SCRIPT, [SCRIPT]: IMAGE });
  });
});
