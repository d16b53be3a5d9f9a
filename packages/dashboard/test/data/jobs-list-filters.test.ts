import { QueueAdmin } from "@stint/core";
import { PostgresJobBrowser } from "@stint/postgres-driver";
import { createTestSchema, type TestSchema } from "@stint/postgres-driver/testing";
import { expect } from "chai";
import { sql } from "kysely";
import type { DashboardSources } from "../../src/data/dashboard-sources";
import { parseJobsFilter } from "../../src/data/jobs-filter";
import { COUNT_CAP, readJobsList } from "../../src/data/jobs-list-data";
import { readOverview } from "../../src/data/overview-data";
import { startDashboardServer, TEST_TOKEN, type DashboardServer } from "../support/dashboard-server";

const ODD_QUEUE = "Odd Queue/Ü";

describe("the jobs list's filters over 12,000 finished jobs", () => {
  let test: TestSchema;
  let sources: DashboardSources;

  before(async () => {
    test = await createTestSchema({ prefix: "stint_dash" });
    sources = { store: test.store, browser: new PostgresJobBrowser({ db: test.db, schema: test.schema }), admin: new QueueAdmin(test.store) };
    // 12,000 succeeded jobs of the last three hours, three dead ones of a rare queue among the oldest, and two jobs written by SQL to a queue that breaks the naming rule.
    await sql`INSERT INTO ${sql.id(test.schema, "finished_jobs")} (id, queue, payload, state, attempts, created_at, run_at, updated_at, finished_at, last_error)
SELECT g, CASE WHEN g IN (10, 20, 30) THEN 'rare' ELSE 'queue-' || (g % 5) END, '{}'::jsonb,
       CASE WHEN g IN (10, 20, 30) THEN 'dead' ELSE 'succeeded' END, 1, t, t, t, t,
       CASE WHEN g IN (10, 20, 30) THEN 'Error: rare gateway meltdown' END
  FROM generate_series(1, 12000) AS g, LATERAL (SELECT now() - (12000 - g) * interval '900 milliseconds' AS t) AS at`.execute(test.db);
    await sql`INSERT INTO ${sql.id(test.schema, "jobs")} (id, queue, payload) VALUES (12001, ${ODD_QUEUE}, '{}'), (12002, ${ODD_QUEUE}, '{}')`.execute(test.db);
    await sql`SELECT setval(${`${test.schema}.jobs_id_seq`}::regclass, 12003)`.execute(test.db);
    await sql`ANALYZE ${sql.id(test.schema, "finished_jobs")}`.execute(test.db);
    await sql`ANALYZE ${sql.id(test.schema, "jobs")}`.execute(test.db);
  });
  after(async () => {
    await test.drop();
  });

  async function list(query: string) {
    return readJobsList(sources, parseJobsFilter(new URLSearchParams(query)));
  }

  it("shows the 3 rare dead jobs on the first page, counted exactly", async () => {
    for (const query of ["queue=rare", "queue=rare&state=dead", "state=dead", "q=meltdown"]) {
      const found = await list(query);
      expect(
        found.page.jobs.map((job) => job.id),
        query,
      ).to.deep.equal(["30", "20", "10"]);
      expect(found.page.nextBeforeId, query).to.equal(null);
    }
    expect((await list("queue=rare&state=dead")).total).to.deep.equal({ kind: "counted", jobs: 3, atLeast: false });
    expect((await list("q=meltdown")).total).to.deep.equal({ kind: "unknown" });
  });

  it("labels the count past the cap: at least, and about how many in all when nothing is filtered", async () => {
    const all = await list("");
    expect(all.total).to.deep.include({ kind: "counted", jobs: COUNT_CAP, atLeast: true });
    const estimate = (all.total as { estimate?: number }).estimate!;
    expect(estimate).to.be.within(11_000, 13_000);
    const succeeded = await list("state=succeeded");
    expect(succeeded.total).to.deep.equal({ kind: "counted", jobs: COUNT_CAP, atLeast: true });
  });

  it("lists a queue whose name breaks the naming rule", async () => {
    const found = await list(`queue=${encodeURIComponent(ODD_QUEUE)}`);
    expect(found.page.jobs.map((job) => [job.id, job.queue])).to.deep.equal([
      ["12002", ODD_QUEUE],
      ["12001", ODD_QUEUE],
    ]);
    expect(found.total).to.deep.equal({ kind: "counted", jobs: 2, atLeast: false });
  });

  it("pages older and newer by id", async () => {
    const first = await list("state=succeeded");
    const older = await list(`state=succeeded&before=${first.page.nextBeforeId!}`);
    expect(older.page.jobs[0]!.id).to.equal(String(Number(first.page.jobs.at(-1)!.id) - 1));
    const back = await list(`state=succeeded&after=${older.page.newerAfterId!}`);
    expect(back.page.jobs.map((job) => job.id)).to.deep.equal(first.page.jobs.map((job) => job.id));
    expect(back.page.newerAfterId).to.equal(null);
  });

  it("reads the throughput once for every tab refreshing within a few seconds", async () => {
    let reads = 0;
    const counting: DashboardSources = {
      ...sources,
      browser: {
        ...sources.browser,
        browseJobs: (params) => sources.browser.browseJobs(params),
        countJobsUpTo: (params) => sources.browser.countJobsUpTo(params),
        estimateJobs: () => sources.browser.estimateJobs(),
        readQueueGauges: () => sources.browser.readQueueGauges(),
        readRecentThroughput: (params) => {
          reads += 1;
          return sources.browser.readRecentThroughput(params);
        },
      },
    };
    const tabs = await Promise.all([readOverview(counting), readOverview(counting), readOverview(counting)]);
    await readOverview(counting);
    expect(reads).to.equal(1);
    expect(tabs[0].queues.find((row) => row.queue === "rare")).to.include({ dead: 3 });
    await readOverview(counting, { throughputMaxAgeMs: 0 });
    expect(reads).to.equal(2);
  });
});

describe("the jobs page of a queue whose name breaks the naming rule", () => {
  let server: DashboardServer;

  before(async () => {
    server = await startDashboardServer();
    await sql`INSERT INTO ${sql.id(server.test.schema, "jobs")} (queue, payload) VALUES (${ODD_QUEUE}, '{}'), ('<b>odd</b>', '{}')`.execute(server.test.db);
  });
  after(async () => {
    await server.close();
  });

  it("answers 200 with its jobs, the name escaped, where it answered 400", async () => {
    for (const queue of [ODD_QUEUE, "<b>odd</b>"]) {
      const response = await fetch(`${server.url}/jobs?queue=${encodeURIComponent(queue)}`, { headers: { authorization: `Bearer ${TEST_TOKEN}` } });
      const body = await response.text();
      expect(response.status, queue).to.equal(200);
      expect(body.match(/<tr data-job-id="/g) ?? [], queue).to.have.lengthOf(1);
      expect(body).to.not.contain("<b>odd</b>");
    }
  });
});
