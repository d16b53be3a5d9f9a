import { expect } from "chai";
import { defineJob, JobClient, step } from "@stint/core";
import type { Browser, Page } from "playwright-core";
import { launchChromium } from "../support/chromium";
import { startDashboardServer, type DashboardServer } from "../support/dashboard-server";
import { openSignedIn } from "../support/sign-in";

const Part = defineJob<{ n: number }>("wf-part", { maxAttempts: 1 });

describe("the workflow page in Chromium: the graph renders and its boxes and links lead to the steps", () => {
  let browser: Browser;
  let server: DashboardServer;
  let page: Page;
  let workflowId: string;
  let rootJob: string;

  before(async () => {
    browser = await launchChromium();
    server = await startDashboardServer();
    const workflow = await new JobClient(server.test.store).enqueueWorkflow("render", {
      root: step(Part, { n: 0 }),
      parts: Array.from({ length: 200 }, (_, n) => step(Part, { n }, { after: ["root"] })),
      last: step(Part, { n: -1 }, { after: ["parts"] }),
    });
    workflowId = workflow.id;
    rootJob = workflow.steps.root.id;
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

  it("draws three coloured boxes joined by lines, and a box opens its step's job, which links back", async () => {
    await openSignedIn(page, server, "/workflows");
    await page.click(`a[href="/workflows/${workflowId}"]`);
    await page.waitForSelector("svg.wf-graph");
    const boxes = await page.$$eval("svg.wf-graph a.wf-node rect", (rects) =>
      rects.map((rect) => {
        const box = rect.getBoundingClientRect();
        return { width: Math.round(box.width), height: Math.round(box.height), top: Math.round(box.top), fill: getComputedStyle(rect).fill };
      }),
    );
    expect(boxes).to.have.length(3);
    for (const box of boxes) {
      expect(box.width).to.be.above(100);
      expect(box.fill, "the stylesheet colours the box").to.not.equal("rgb(0, 0, 0)");
    }
    expect(boxes[0]!.top).to.be.below(boxes[1]!.top);
    expect(boxes[1]!.top).to.be.below(boxes[2]!.top);
    expect(await page.locator("svg.wf-graph line").count()).to.equal(2);
    expect(await page.textContent('[data-node="l1-0"] .wf-name')).to.equal("parts ×200");

    await page.click('[data-node="l1-0"]');
    expect(await page.evaluate(() => location.hash)).to.equal("#steps-l1-0");

    await page.click('[data-node="l0-0"]');
    await page.waitForURL(new RegExp(`/jobs/${rootJob}$`));
    const back = page.locator("dl.fields a[data-workflow]");
    expect(await back.textContent()).to.equal(`Workflow ${workflowId}`);
    await back.click();
    await page.waitForURL(new RegExp(`/workflows/${workflowId}$`));
    expect(await page.textContent("h1")).to.contain(`Workflow ${workflowId}`);
  });
});
