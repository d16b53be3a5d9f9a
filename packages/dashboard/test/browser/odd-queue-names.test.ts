import { expect } from "chai";
import type { Browser, Page } from "playwright-core";
import { launchChromium } from "../support/chromium";
import { startDashboardServer, type DashboardServer } from "../support/dashboard-server";
import { seedOddQueue, type OddQueue } from "../support/seed-odd-queue";
import { openSignedIn } from "../support/sign-in";

const SPACED = "billing / eu west";
const MARKUP = "<b>bold</b> Ünï queue";

describe("queues whose names break the naming rule, clicked through in Chromium", () => {
  let browser: Browser;
  let server: DashboardServer;
  let page: Page;
  const seeded = new Map<string, OddQueue>();
  const statuses: number[] = [];

  before(async () => {
    [browser, server] = await Promise.all([launchChromium(), startDashboardServer()]);
    for (const queue of [SPACED, MARKUP]) seeded.set(queue, await seedOddQueue(server.test.db, server.test.schema, server.test.store, queue));
    page = await browser.newPage();
    page.on("dialog", (dialog) => void dialog.accept());
    page.on("response", (response) => {
      if (response.request().isNavigationRequest()) statuses.push(response.status());
    });
    await openSignedIn(page, server);
  });
  after(async () => {
    await page?.close();
    await browser?.close();
    await server?.close();
  });

  const row = (queue: string) => page.locator(`tr[data-queue="${queue}"]`);
  const shown = () => page.$$eval("tr[data-job-id]", (rows) => rows.map((entry) => entry.getAttribute("data-job-id")!));
  const pausedIn = async (queue: string) => (await server.test.store.listQueueControls()).find((entry) => entry.queue === queue)?.paused;

  for (const queue of [SPACED, MARKUP]) {
    it(`goes from the overview to the jobs of ${JSON.stringify(queue)}, pauses and resumes it, and opens a job`, async () => {
      statuses.length = 0;
      await page.goto(`${server.url}/`);
      expect((await row(queue).locator("th").textContent())?.trim()).to.equal(queue);
      expect(await row(queue).locator("th b").count(), "the name is text, not markup").to.equal(0);

      await Promise.all([page.waitForURL(/\/jobs\?/), row(queue).locator("th a").click()]);
      expect(new URL(page.url()).searchParams.get("queue")).to.equal(queue);
      const { queued, dead } = seeded.get(queue)!;
      expect(await shown()).to.have.members([...queued, ...dead]);

      await page.goto(`${server.url}/`);
      await Promise.all([page.waitForURL(/done=paused/), row(queue).locator('button:has-text("Pause")').click()]);
      expect(await page.textContent(".flash")).to.contain(`Paused queue ${queue}`);
      expect(await row(queue).getAttribute("class")).to.equal("paused");
      expect(await pausedIn(queue)).to.equal(true);

      await Promise.all([page.waitForURL(/done=resumed/), row(queue).locator('button:has-text("Resume")').click()]);
      expect(await page.textContent(".flash")).to.contain(`Resumed queue ${queue}`);
      expect(await pausedIn(queue)).to.equal(false);

      await Promise.all([page.waitForURL(/\/jobs\?/), row(queue).locator('[data-col="dead"] a').click()]);
      expect(await shown()).to.deep.equal([...dead]);
      await Promise.all([page.waitForURL(new RegExp(`/jobs/${dead[0]}$`)), page.click(`tr[data-job-id="${dead[0]}"] a`)]);
      expect(await page.textContent("body")).to.contain(`odd queue job ${dead[0]} failed`);
      await Promise.all([page.waitForURL(/\/jobs\?/), page.click(".crumbs a")]);
      expect(new URL(page.url()).searchParams.get("queue")).to.equal(queue);
      // Every page answered 200; the two 303s are the pause and resume posts redirecting to the overview.
      expect(
        statuses.filter((status) => status === 303),
        `statuses ${statuses.join(", ")}`,
      ).to.have.lengthOf(2);
      expect(
        statuses.filter((status) => status !== 303),
        `statuses ${statuses.join(", ")}`,
      )
        .to.have.length.at.least(8)
        .and.satisfy((answered: number[]) => answered.every((status) => status === 200));
    });
  }
});
