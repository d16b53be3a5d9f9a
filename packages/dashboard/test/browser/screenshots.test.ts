import { expect } from "chai";
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { defineJob } from "@stint/core";
import { buildNewJob } from "@stint/core/driver";
import type { Browser } from "playwright-core";
import { launchChromium } from "../support/chromium";
import { startDashboardServer, type DashboardServer } from "../support/dashboard-server";
import { enqueueJobs, makeDeadJobs, makeRetryingJobs, makeRunningJobs, makeSucceededJobs } from "../support/seed-jobs";
import { openSignedIn } from "../support/sign-in";

/**
 * Where the screenshots go: `STINT_SCREENSHOTS` (the README's are made with
 * `STINT_SCREENSHOTS=docs/screenshots`), else a temporary directory, so a
 * test run leaves the committed images alone.
 */
const OUT = process.env["STINT_SCREENSHOTS"];

describe("screenshots of each page", () => {
  let browser: Browser;
  let server: DashboardServer;
  let dir: string;
  let deadId: string;

  before(async () => {
    dir = OUT === undefined ? mkdtempSync(join(tmpdir(), "stint-screens-")) : resolve(OUT);
    mkdirSync(dir, { recursive: true });
    browser = await launchChromium();
    server = await startDashboardServer({ jobKinds: [{ name: "charge-card", secretFields: ["card.number", "card.cvc"] }, { name: "send-invoice" }] });
    const { store, db, schema } = server.test;
    // Finish times spread over the hour, denser lately, so the sparklines have a shape.
    const spread = (count: number) => (n: number) => Math.floor(Math.pow(((n * 7919) % count) / count, 1.8) * 3_500_000);
    [deadId] = (await makeDeadJobs(
      store,
      "charge-card",
      2,
      (id) =>
        `PaymentError: card declined (do_not_honor) for job ${id}\n    at ChargeCardWorker.processItem (dist/workers/charge-card-worker.js:41:13)\n    at AttemptExecutor.run (node_modules/@stint/core/dist/src/worker/attempt-executor.js:88:22)`,
      (n) => ({ orderId: 5120 + n, amountCents: 4_990, currency: "EUR", card: { number: "4000000000000002", cvc: "123", expiry: "12/27" } }),
    )) as [string];
    await makeSucceededJobs(db, schema, store, "charge-card", 140, spread(140));
    await makeSucceededJobs(db, schema, store, "send-invoice", 420, spread(420));
    await makeRunningJobs(store, "send-invoice", 3);
    await enqueueJobs(store, "send-invoice", 12);
    await makeRetryingJobs(store, "send-invoice", 2, "Error: SMTP 451 try again later");
    await makeSucceededJobs(db, schema, store, "generate-report", 9, spread(9));
    await enqueueJobs(store, "generate-report", 4);
    await store.setQueueControls("generate-report", { paused: true });
    await makeSucceededJobs(db, schema, store, "call-partner-api", 60, spread(60));
    await store.setQueueControls("call-partner-api", { maxRunning: 3, rateLimit: { limit: 100, periodMs: 60_000 } });
    await makeDeadJobs(store, "send-invoice", 1, () => "Error: mailbox full (552)\n    at SmtpMailer.send (dist/services/smtp-mailer.js:77:11)");
    // Two invoices held until later, so the queued list shows "Run at", "scheduled" and "Run now".
    await store.enqueueMany(
      [1, 2].map((n) => buildNewJob(defineJob<object>("send-invoice"), { invoice: 9000 + n }, { runAt: new Date(Date.now() + n * 5_400_000) })),
    );
  });
  after(async () => {
    await browser?.close();
    await server?.close();
    if (OUT === undefined && dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  // 1280 px and a phone's 390 px, light and dark; phone shots are one screen high, to keep the files small.
  const pages: [string, () => string, "light" | "dark", number][] = [
    ["overview", () => "/", "light", 1280],
    ["overview-dark", () => "/", "dark", 1280],
    ["jobs", () => "/jobs?state=dead", "light", 1280],
    ["jobs-dark", () => "/jobs?queue=send-invoice&state=queued", "dark", 1280],
    ["job", () => `/jobs/${deadId}`, "light", 1280],
    ["job-dark", () => `/jobs/${deadId}`, "dark", 1280],
    ["overview-phone", () => "/", "light", 390],
    ["overview-phone-dark", () => "/", "dark", 390],
    ["jobs-phone", () => "/jobs?queue=send-invoice&state=queued", "light", 390],
    ["jobs-phone-dark", () => "/jobs?queue=send-invoice&state=queued", "dark", 390],
  ];
  for (const [name, path, scheme, width] of pages) {
    it(`writes ${name}.png`, async () => {
      const viewport = width === 390 ? { width, height: 844 } : { width, height: 720 };
      const context = await browser.newContext({ viewport, colorScheme: scheme, timezoneId: "Europe/Berlin", locale: "en-GB" });
      const page = await context.newPage();
      await openSignedIn(page, server, path());
      const file = join(dir, `${name}.png`);
      await page.screenshot({ path: file, fullPage: width > 390 && name.startsWith("job") });
      await context.close();
      const png = readFileSync(file);
      expect(png.subarray(1, 4).toString("latin1")).to.equal("PNG");
      expect(png.length).to.be.greaterThan(10_000);
    });
  }
});
