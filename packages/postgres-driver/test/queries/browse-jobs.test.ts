import { expect } from "chai";
import fc from "fast-check";
import type { JobState } from "@stint/core";
import { sql } from "kysely";
import { PostgresJobBrowser } from "../../src/postgres-job-browser";
import { browseJobsStatement, likePattern, type BrowseJobsParams } from "../../src/queries/browse-jobs";
import { createTestSchema, type TestSchema } from "../../src/testing";
import { newJob } from "@stint/core/testing";

const STATES: readonly JobState[] = ["queued", "running", "failed", "succeeded", "dead", "cancelled"];
const ERRORS = [null, "Error: gateway timeout", "Error: 100% of quota_used", "TypeError: card declined"];

interface SeededJob {
  readonly id: string;
  readonly queue: string;
  readonly state: JobState;
  readonly error: string | null;
  readonly createdAt: number;
}

describe("PostgresJobBrowser", () => {
  let test: TestSchema;
  let browser: PostgresJobBrowser;
  let seeded: SeededJob[];
  const base = Date.parse("2024-03-01T00:00:00Z");

  /** `count` jobs in three queues, states and errors in a fixed rotation, created one minute apart. */
  async function seed(count: number): Promise<void> {
    const results = await test.store.enqueueMany(Array.from({ length: count }, (_, n) => newJob(`queue-${n % 3}`, { n })));
    const ids = results.map((result) => result.id);
    await sql`UPDATE ${sql.id(test.schema, "jobs")} AS j
      SET state = s.state, last_error = s.error, created_at = s.created_at, finished_at = s.finished_at,
          locked_by = CASE WHEN s.state = 'running' THEN 'w' END, locked_until = CASE WHEN s.state = 'running' THEN now() + interval '1 hour' END
      FROM (SELECT unnest(${ids}::bigint[]) AS id, unnest(${ids.map((_, n) => STATES[(n * 7) % 6])}::text[]) AS state,
                   unnest(${ids.map((_, n) => ERRORS[(n * 5) % 4])}::text[]) AS error,
                   unnest(${ids.map((_, n) => new Date(base + n * 60_000).toISOString())}::timestamptz[]) AS created_at,
                   unnest(${ids.map((_, n) => new Date(base + n * 60_000 + 1_000).toISOString())}::timestamptz[]) AS finished_at) AS s
     WHERE j.id = s.id`.execute(test.db);
    seeded = ids.map((id, n) => ({ id, queue: `queue-${n % 3}`, state: STATES[(n * 7) % 6]!, error: ERRORS[(n * 5) % 4]!, createdAt: base + n * 60_000 }));
  }

  function matches(job: SeededJob, params: Omit<BrowseJobsParams, "limit" | "scanLimit">): boolean {
    return (
      (params.queue === undefined || job.queue === params.queue) &&
      (params.states === undefined || params.states.includes(job.state)) &&
      (params.errorText === undefined || ((job.error ?? "").toLowerCase().includes(params.errorText.toLowerCase()) && job.error !== null)) &&
      (params.createdFrom === undefined || job.createdAt >= params.createdFrom.getTime()) &&
      (params.createdTo === undefined || job.createdAt < params.createdTo.getTime())
    );
  }

  /** Every page from the first until `nextBeforeId` is null; the ids in order. */
  async function walk(params: Omit<BrowseJobsParams, "beforeId">): Promise<string[]> {
    const ids: string[] = [];
    let beforeId: string | undefined;
    for (let pages = 0; pages < 1_000; pages += 1) {
      const page = await browser.browseJobs({ ...params, ...(beforeId === undefined ? {} : { beforeId }) });
      expect(page.jobs.length).to.be.at.most(params.limit);
      ids.push(...page.jobs.map((job) => job.id));
      if (page.nextBeforeId === null) return ids;
      beforeId = page.nextBeforeId;
    }
    throw new Error("more than 1,000 pages");
  }

  before(async () => {
    test = await createTestSchema({ prefix: "stint_browse" });
    browser = new PostgresJobBrowser({ db: test.db, schema: test.schema });
    await seed(600);
  });
  after(async () => {
    await test.drop();
  });

  it("pages through exactly the matching jobs, newest first, for any filters and page sizes", async () => {
    const filters = fc.record(
      {
        queue: fc.constantFrom("queue-0", "queue-1", "queue-2"),
        states: fc.subarray([...STATES], { minLength: 1 }),
        errorText: fc.constantFrom("TIMEOUT", "100%", "quota_", "declined", "%", "_"),
        createdFrom: fc.integer({ min: 0, max: 600 }).map((minute) => new Date(base + minute * 60_000)),
        createdTo: fc.integer({ min: 0, max: 600 }).map((minute) => new Date(base + minute * 60_000)),
      },
      { requiredKeys: [] },
    );
    await fc.assert(
      fc.asyncProperty(filters, fc.integer({ min: 1, max: 80 }), fc.integer({ min: 1, max: 700 }), async (params, limit, scanLimit) => {
        const expected = seeded
          .filter((job) => matches(job, params))
          .map((job) => job.id)
          .reverse();
        expect(await walk({ ...params, limit, scanLimit })).to.deep.equal(expected);
      }),
      { numRuns: 60 },
    );
  });

  it("says how much a searched page looked at, and that older jobs remain when the window was full", async () => {
    const page = await browser.browseJobs({ queue: "queue-1", states: ["dead"], errorText: "timeout", limit: 50, scanLimit: 30 });
    expect(page.searched).to.deep.equal({ scanned: 30, matched: page.searched!.matched, complete: false });
    expect(page.nextBeforeId).to.be.a("string");
    const plain = await browser.browseJobs({ states: ["dead"], limit: 5, scanLimit: 30 });
    expect(plain.searched).to.equal(null);
    expect(plain.jobs.map((job) => job.state)).to.deep.equal(["dead", "dead", "dead", "dead", "dead"]);
  });

  it("matches the error text literally, with LIKE's wildcards escaped", () => {
    expect(likePattern("100%_\\x")).to.equal("%100\\%\\_\\\\x%");
  });

  it("counts up to the cap and one more, never further", async () => {
    expect(await browser.countJobsUpTo({ states: ["dead"], cap: 10_000 })).to.equal(seeded.filter((job) => job.state === "dead").length);
    expect(await browser.countJobsUpTo({ cap: 10 })).to.equal(11);
    expect(await browser.countJobsUpTo({ queue: "queue-2", states: ["queued", "failed"], cap: 1_000 })).to.equal(
      seeded.filter((job) => job.queue === "queue-2" && (job.state === "queued" || job.state === "failed")).length,
    );
  });

  it("refuses bad parameters with an error naming them", async () => {
    const refusals: [Partial<BrowseJobsParams>, RegExp][] = [
      [{ beforeId: "12abc" }, /beforeId/],
      [{ states: ["gone" as JobState] }, /states/],
      [{ queue: "" }, /queue/i],
      [{ errorText: "x".repeat(201) }, /errorText/],
      [{ createdFrom: new Date(Number.NaN) }, /createdFrom/],
      [{ limit: 0 }, /limit/],
    ];
    for (const [params, message] of refusals) {
      let failure: unknown;
      await browser.browseJobs({ limit: 10, scanLimit: 100, ...params }).catch((thrown: unknown) => (failure = thrown));
      expect(String(failure), JSON.stringify(params)).to.match(message);
    }
  });

  describe("on a table of a few thousand rows", () => {
    async function plan(params: BrowseJobsParams): Promise<string> {
      const { query } = browseJobsStatement(test.schema, params);
      const { rows } = await sql<{ "QUERY PLAN": string }>`EXPLAIN ${query}`.execute(test.db);
      return rows.map((row) => row["QUERY PLAN"]).join("\n");
    }

    // A window of 500 of 6,000 jobs: the proportion of the dashboard's 10,000 of a million-row table, scaled down.
    before(async () => {
      await seed(6_000);
      await sql`ANALYZE ${sql.id(test.schema, "jobs")}`.execute(test.db);
    });

    const shapes: [string, BrowseJobsParams][] = [
      ["every job", { limit: 50, scanLimit: 500 }],
      ["dead jobs", { states: ["dead"], limit: 50, scanLimit: 500 }],
      ["waiting jobs of a queue", { queue: "queue-1", states: ["queued", "failed"], limit: 50, scanLimit: 500 }],
      ["dead jobs of a queue with an error text", { queue: "queue-1", states: ["dead"], errorText: "timeout", limit: 50, scanLimit: 500 }],
      ["jobs of a time range", { createdFrom: new Date(base), createdTo: new Date(base + 3_600_000), limit: 50, scanLimit: 500 }],
      ["the next page of succeeded jobs", { states: ["succeeded"], beforeId: "3000", limit: 50, scanLimit: 500 }],
    ];
    for (const [name, params] of shapes) {
      it(`reads ${name} through an index, never a scan of the table`, async () => {
        const explained = await plan(params);
        expect(explained, explained).to.not.match(/Seq Scan on jobs/);
        expect(explained, explained).to.match(/Index (Only )?Scan|Bitmap Index Scan/);
      });
    }
  });
});

describe("PostgresJobBrowser.readRecentThroughput", () => {
  let test: TestSchema;

  beforeEach(async () => {
    test = await createTestSchema({ prefix: "stint_browse" });
  });
  afterEach(async () => {
    await test.drop();
  });

  it("counts the jobs that succeeded within the window by queue and bucket, oldest bucket first", async () => {
    await test.store.enqueueMany(Array.from({ length: 40 }, (_, n) => newJob(n % 4 === 0 ? "mail" : "pdf", { n })));
    // Job n finished n·90 seconds ago (0..3510 s): all within an hour's window.
    await sql`UPDATE ${sql.id(test.schema, "jobs")} SET state = 'succeeded',
      finished_at = now() - ((id - (SELECT min(id) FROM ${sql.id(test.schema, "jobs")})) * 90) * interval '1 second',
      created_at = now() - interval '2 hours'`.execute(test.db);
    const browser = new PostgresJobBrowser({ db: test.db, schema: test.schema });
    const hour = await browser.readRecentThroughput({ windowMs: 3_600_000, buckets: 4, scanLimit: 1_000 });
    expect(hour).to.include({ scanned: 40, coversWindow: true, bucketMs: 900_000 });
    expect(hour.queues.map((queue) => [queue.queue, queue.succeeded])).to.deep.equal([
      ["mail", 10],
      ["pdf", 30],
    ]);
    const mail = hour.queues[0]!;
    // mail jobs: n = 0, 4, …, 36 finished 0, 360, …, 3240 s ago; buckets of 900 s, newest last.
    expect(mail.buckets).to.deep.equal([2, 3, 2, 3]);
  });

  it("says the window is not covered when the newest jobs looked at are all younger than it", async () => {
    await test.store.enqueueMany(Array.from({ length: 30 }, (_, n) => newJob("mail", { n })));
    await sql`UPDATE ${sql.id(test.schema, "jobs")} SET state = 'succeeded', finished_at = now()`.execute(test.db);
    const browser = new PostgresJobBrowser({ db: test.db, schema: test.schema });
    const hour = await browser.readRecentThroughput({ windowMs: 3_600_000, buckets: 12, scanLimit: 10 });
    expect(hour).to.include({ scanned: 10, coversWindow: false });
    expect(hour.queues[0]).to.include({ queue: "mail", succeeded: 10 });
  });
});
