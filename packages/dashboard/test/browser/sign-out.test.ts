import { expect } from "chai";
import type { Browser } from "playwright-core";
import { launchChromium } from "../support/chromium";
import { startDashboardServer, type DashboardServer } from "../support/dashboard-server";
import { openSignedIn } from "../support/sign-in";

const SESSION = "stint_dashboard_session";

describe("signing in and out, in Chromium", () => {
  let browser: Browser;
  let server: DashboardServer;

  before(async () => {
    browser = await launchChromium();
    server = await startDashboardServer({ basePath: "/admin/jobs" });
  });
  after(async () => {
    await browser?.close();
    await server?.close();
  });

  it("gives each browser its own session, and a cookie kept from before Sign out opens only the sign-in page", async () => {
    const first = await browser.newContext();
    const second = await browser.newContext();
    try {
      const page = await first.newPage();
      await openSignedIn(page, server, "/");
      await openSignedIn(await second.newPage(), server, "/");
      const session = async (context: typeof first) => (await context.cookies()).find((cookie) => cookie.name === SESSION)!;
      const kept = await session(first);
      expect(kept.value).to.not.equal((await session(second)).value);
      expect(kept.path).to.equal("/admin/jobs");
      expect(kept.httpOnly).to.equal(true);
      expect(kept.sameSite).to.equal("Strict");
      expect(kept.expires, "a cookie with Max-Age, not one for the browser's lifetime").to.be.greaterThan(Date.now() / 1_000);

      await Promise.all([page.waitForURL(/\/login$/), page.click('button:has-text("Sign out")')]);
      expect(await first.cookies()).to.satisfy((cookies: { name: string }[]) => cookies.every((cookie) => cookie.name !== SESSION));

      const replay = await browser.newContext();
      try {
        await replay.addCookies([{ ...kept }]);
        const replayed = await replay.newPage();
        const response = await replayed.goto(`${server.url}/`);
        expect(response?.status()).to.equal(401);
        expect(await replayed.$('input[name="token"]')).to.not.equal(null);
      } finally {
        await replay.close();
      }
      // The other browser's session is its own, and still open.
      const other = await second.newPage();
      expect((await other.goto(`${server.url}/`))?.status()).to.equal(200);
    } finally {
      await first.close();
      await second.close();
    }
  });
});
