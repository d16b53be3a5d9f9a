import { expect } from "chai";
import { sql } from "kysely";
import type { Browser, Page } from "playwright-core";
import { launchChromium } from "../support/chromium";
import { startDashboardServer, type DashboardServer } from "../support/dashboard-server";
import { seedManyJobs } from "../support/seed-many-jobs";
import { openSignedIn } from "../support/sign-in";

/** 1,000,000 finished jobs and 10,000 waiting: the 3 rare dead jobs are among the oldest third. */
const FINISHED = 1_000_000;
const WAITING = 10_000;

describe(`the jobs page's filters find 3 rare jobs among ${FINISHED.toLocaleString("en")} on the first page, in Chromium`, () => {
  let browser: Browser;
  let server: DashboardServer;
  let page: Page;
  let rareIds: readonly string[];
  let range: { from: string; to: string };

  before(async () => {
    [browser, server] = await Promise.all([launchChromium(), startDashboardServer()]);
    ({ rareIds } = await seedManyJobs(server.test.db, server.test.schema, { finished: FINISHED, waiting: WAITING }));
    const { rows } = await sql<{ first: Date; last: Date }>`SELECT min(created_at) AS first, max(created_at) AS last
      FROM ${sql.id(server.test.schema, "finished_jobs")} WHERE queue = 'rare'`.execute(server.test.db);
    // A range of the rare jobs' creation plus two seconds each side: a dozen of other jobs fall in it too.
    range = { from: new Date(rows[0]!.first.getTime() - 2_000).toISOString(), to: new Date(rows[0]!.last.getTime() + 2_000).toISOString() };
    page = await browser.newPage();
    await openSignedIn(page, server);
  });
  after(async () => {
    await page?.close();
    await browser?.close();
    await server?.close();
  });

  const shown = () => page.$$eval("tr[data-job-id]", (rows) => rows.map((row) => row.getAttribute("data-job-id")!));

  async function firstPage(query: string): Promise<string[]> {
    const response = await page.goto(`${server.url}/jobs?${query}`);
    expect(response?.status(), query).to.equal(200);
    return shown();
  }

  it("seeded the jobs it says, the rare ones among the oldest third", async () => {
    const { rows } = await sql<{ finished: string; waiting: string }>`SELECT
      (SELECT count(*) FROM ${sql.id(server.test.schema, "finished_jobs")}) AS finished,
      (SELECT count(*) FROM ${sql.id(server.test.schema, "jobs")}) AS waiting`.execute(server.test.db);
    expect(rows[0]).to.deep.equal({ finished: String(FINISHED), waiting: String(WAITING) });
    expect(rareIds.every((id) => Number(id) < FINISHED / 3)).to.equal(true);
  });

  for (const [name, query] of [
    ["queue=rare", "queue=rare"],
    ["state=dead&queue=rare", "state=dead&queue=rare"],
    ["the error text meltdown", "q=meltdown"],
  ] as const) {
    it(`shows exactly the 3 rare jobs on the first page for ${name}`, async () => {
      expect(await firstPage(query)).to.have.members([...rareIds]);
      expect(await page.textContent("tbody")).to.contain("meltdown");
    });
  }

  it("shows the 3 rare jobs on the first page of a created-time range that holds them", async () => {
    const ids = await firstPage(new URLSearchParams(range).toString());
    expect(ids).to.include.members([...rareIds]);
    // The range holds about a dozen jobs; each shown is within it.
    expect(ids.length).to.be.within(4, 50);
    const { rows } = await sql<{ outside: string }>`SELECT count(*) AS outside FROM ${sql.id(server.test.schema, "finished_jobs")}
      WHERE id = ANY(${ids}::bigint[]) AND (created_at < ${range.from}::timestamptz OR created_at > ${range.to}::timestamptz)`.execute(server.test.db);
    expect(rows[0]!.outside).to.equal("0");
  });

  it("leads from the rare queue's dead count on the overview to a page that lists the 3", async () => {
    await page.goto(`${server.url}/`);
    const dead = page.locator('tr[data-queue="rare"] [data-col="dead"] a');
    expect((await dead.textContent())?.trim()).to.equal("3");
    await Promise.all([page.waitForURL(/\/jobs\?/), dead.click()]);
    expect(new URL(page.url()).searchParams.get("queue")).to.equal("rare");
    expect(new URL(page.url()).searchParams.get("state")).to.equal("dead");
    expect(await shown()).to.have.members([...rareIds]);
  });
});
