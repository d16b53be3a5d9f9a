import { expect } from "chai";
import fc from "fast-check";
import type { JobState } from "@stint/core";
import { sql } from "kysely";
import { PostgresJobBrowser } from "../../src/postgres-job-browser";
import { browseJobsStatement, likePattern, type BrowseJobsParams } from "../../src/queries/browse-jobs";
import { readRecentThroughputStatement } from "../../src/queries/read-recent-throughput";
import { createTestSchema, type TestSchema } from "../../src/testing";
import { newJob } from "@stint/core/testing";
import { insertLegacyFinishedRow, moveFinishedRows } from "../support/finished-rows";

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

  /**
   * `count` jobs in three queues, states and errors in a fixed rotation,
   * created one minute apart. The finished ones of queue-0 and queue-1 are
   * then moved to `finished_jobs`, into a partition per day; those of
   * queue-2 stay in `jobs`, as a version before 15 left them.
   */
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
    const lastDay = new Date(base + count * 60_000).toISOString().slice(0, 10);
    await sql`SELECT ${sql.id(test.schema, "ensure_history_partitions")}('2024-03-01'::date, ${lastDay}::date)`.execute(test.db);
    await moveFinishedRows(test.db, test.schema, sql`queue <> 'queue-2'`);
  }

  /** The partitions of `finished_jobs` that hold rows. */
  async function filledPartitions(): Promise<string[]> {
    const { rows } = await sql<{ name: string }>`SELECT DISTINCT c.relname AS name
      FROM ${sql.id(test.schema, "finished_jobs")} AS f JOIN pg_class AS c ON c.oid = f.tableoid`.execute(test.db);
    return rows.map((row) => row.name);
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
    const page = await browser.browseJobs({ queue: "queue-1", states: ["dead"], errorText: "%", limit: 50, scanLimit: 30 });
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
    /** The plan of `params`' statement; `asBrowser`: planned as the browser runs it, with sequential scans off. */
    async function plan(params: BrowseJobsParams, asBrowser = false): Promise<string> {
      const { query } = browseJobsStatement(test.schema, params);
      return test.db.transaction().execute(async (trx) => {
        if (asBrowser) await sql`SELECT set_config('enable_seqscan', 'off', true)`.execute(trx);
        const { rows } = await sql<{ "QUERY PLAN": string }>`EXPLAIN ${query}`.execute(trx);
        return rows.map((row) => row["QUERY PLAN"]).join("\n");
      });
    }

    // A window of 500 of 6,000 jobs: the proportion of the dashboard's 10,000 of a million-row table, scaled down.
    before(async () => {
      await seed(6_000);
      await sql`ANALYZE ${sql.id(test.schema, "jobs")}`.execute(test.db);
      await sql`ANALYZE ${sql.id(test.schema, "finished_jobs")}`.execute(test.db);
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
      it(`reads ${name} through an index, never a scan of the table or of a partition of the history`, async () => {
        const explained = await plan(params);
        expect(explained, explained).to.not.match(/Seq Scan on jobs/);
        expect(explained, explained).to.match(/Index (Only )?Scan|Bitmap Index Scan/);
        // Partitions of a few hundred rows are cheaper to scan; the browser plans with scans off, and then none is.
        const partitions = await filledPartitions();
        expect(partitions.length, "day partitions holding the seeded history").to.be.at.least(4);
        const asBrowser = await plan(params, true);
        for (const partition of ["jobs", ...partitions]) expect(asBrowser, asBrowser).to.not.contain(`Seq Scan on ${partition} `);
      });
    }

    it("never reads the history for waiting or running jobs", async () => {
      for (const states of [["queued", "failed"], ["running"]] as JobState[][]) {
        for (const params of [
          { states, limit: 50, scanLimit: 500 },
          { states, queue: "queue-1", limit: 50, scanLimit: 500 },
        ]) {
          const explained = await plan(params);
          expect(explained, explained).to.contain(" on jobs").and.not.contain("finished_jobs");
        }
      }
    });
  });
});

describe("PostgresJobBrowser next to a backlog, with every finished job moved", () => {
  let test: TestSchema;

  before(async () => {
    test = await createTestSchema({ prefix: "stint_browse" });
    // 20,000 finished jobs, half of them dead, moved to finished_jobs; then a backlog of 50,000 waiting in jobs.
    await test.store.enqueueMany(Array.from({ length: 20_000 }, (_, n) => newJob(`queue-${n % 3}`, { n })));
    await sql`UPDATE ${sql.id(test.schema, "jobs")} SET state = CASE WHEN id % 2 = 0 THEN 'dead' ELSE 'succeeded' END,
               finished_at = now(), attempts = 1`.execute(test.db);
    await moveFinishedRows(test.db, test.schema);
    await test.store.enqueueMany(Array.from({ length: 50_000 }, (_, n) => newJob(`queue-${n % 3}`, { n })));
    await sql`ANALYZE ${sql.id(test.schema, "jobs")}`.execute(test.db);
    await sql`ANALYZE ${sql.id(test.schema, "finished_jobs")}`.execute(test.db);
  });
  after(async () => {
    await test.drop();
  });

  async function plan(params: BrowseJobsParams): Promise<string> {
    const { rows } = await sql<{ "QUERY PLAN": string }>`EXPLAIN ${browseJobsStatement(test.schema, params).query}`.execute(test.db);
    return rows.map((row) => row["QUERY PLAN"]).join("\n");
  }

  it("finds the dead jobs left in jobs through its partial index, not a walk of the whole backlog", async () => {
    for (const params of [
      { states: ["dead"], limit: 50, scanLimit: 500 },
      { states: ["dead", "cancelled"], queue: "queue-1", limit: 50, scanLimit: 500 },
    ] as BrowseJobsParams[]) {
      const explained = await plan(params);
      expect(explained, explained).to.contain("jobs_finished_idx").and.not.contain("Index Scan Backward using jobs_pkey");
    }
    const browser = new PostgresJobBrowser({ db: test.db, schema: test.schema });
    const page = await browser.browseJobs({ states: ["dead"], limit: 50, scanLimit: 500 });
    expect(page.jobs).to.have.length(50);
    expect(page.jobs.every((job) => job.state === "dead")).to.equal(true);
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

  it("counts the jobs that succeeded within the window by queue and bucket, oldest bucket first, in finished_jobs and in jobs", async () => {
    await test.store.enqueueMany(Array.from({ length: 40 }, (_, n) => newJob(n % 4 === 0 ? "mail" : "pdf", { n })));
    // Job n finished n·90 seconds ago (0..3510 s): all within an hour's window.
    await sql`UPDATE ${sql.id(test.schema, "jobs")} SET state = 'succeeded',
      finished_at = now() - ((id - (SELECT min(id) FROM ${sql.id(test.schema, "jobs")})) * 90) * interval '1 second',
      created_at = now() - interval '2 hours'`.execute(test.db);
    // pdf's jobs move to finished_jobs; mail's stay in jobs, as a version before 15 left them.
    expect(await moveFinishedRows(test.db, test.schema, sql`queue = 'pdf'`)).to.equal(30);
    // Neither counts: a pdf job that succeeded two hours ago, and a mail job that died a minute ago.
    await insertLegacyFinishedRow(test.db, test.schema, { queue: "pdf", state: "succeeded", finishedAgoMs: 7_200_000 });
    await insertLegacyFinishedRow(test.db, test.schema, { queue: "mail", state: "dead", finishedAgoMs: 60_000 });
    await moveFinishedRows(test.db, test.schema, sql`queue = 'pdf'`);
    const browser = new PostgresJobBrowser({ db: test.db, schema: test.schema });
    const hour = await browser.readRecentThroughput({ windowMs: 3_600_000, buckets: 4, scanLimit: 1_000 });
    expect(hour).to.include({ scanned: 40, coversWindow: true, bucketMs: 900_000 });
    // The oldest finish counted: pdf job 39, 3,510 s ago.
    expect(hour.oldestScannedAgeMs).to.be.within(3_510_000, 3_540_000);
    expect(hour.queues.map((queue) => [queue.queue, queue.succeeded])).to.deep.equal([
      ["mail", 10],
      ["pdf", 30],
    ]);
    const [mail, pdf] = hour.queues;
    // mail jobs: n = 0, 4, …, 36 finished 0, 360, …, 3240 s ago; buckets of 900 s, newest last.
    expect(mail!.buckets).to.deep.equal([2, 3, 2, 3]);
    // pdf jobs: the other 30 of n = 0..39, ten per 900 s less mail's.
    expect(pdf!.buckets).to.deep.equal([8, 7, 8, 7]);
  });

  it("reads at most each bucket's share of scanLimit, and says the figures are lower bounds when a bucket was full", async () => {
    await test.store.enqueueMany(Array.from({ length: 31 }, (_, n) => newJob("mail", { n })));
    // 30 jobs finished now, and the oldest 50 minutes ago (the eleventh bucket of five minutes).
    await sql`UPDATE ${sql.id(test.schema, "jobs")} SET state = 'succeeded',
      finished_at = CASE WHEN id = (SELECT min(id) FROM ${sql.id(test.schema, "jobs")}) THEN now() - interval '50 minutes' ELSE now() END`.execute(test.db);
    await moveFinishedRows(test.db, test.schema);
    const browser = new PostgresJobBrowser({ db: test.db, schema: test.schema });
    // A share of 2 per bucket: the newest bucket is full.
    const capped = await browser.readRecentThroughput({ windowMs: 3_600_000, buckets: 12, scanLimit: 24 });
    expect(capped).to.include({ scanned: 3, coversWindow: false });
    expect(capped.queues[0]).to.include({ queue: "mail", succeeded: 3 });
    expect(capped.queues[0]!.buckets).to.deep.equal([0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2]);
    // A share of 31 per bucket: every job is counted, and the window is covered.
    const exact = await browser.readRecentThroughput({ windowMs: 3_600_000, buckets: 12, scanLimit: 12 * 31 });
    expect(exact).to.include({ scanned: 31, coversWindow: true });
    expect(exact.queues[0]!.buckets).to.deep.equal([0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 30]);
  });

  it("reads the window's partitions by finished_at, never a walk of ids nor the older days", async () => {
    // 3,000 succeeded jobs over the last three days, in their day partitions; a window of an hour.
    await test.store.enqueueMany(Array.from({ length: 3_000 }, (_, n) => newJob(`queue-${n % 3}`, { n })));
    await sql`UPDATE ${sql.id(test.schema, "jobs")} SET state = 'succeeded',
      finished_at = now() - (id - (SELECT min(id) FROM ${sql.id(test.schema, "jobs")})) * interval '86 seconds'`.execute(test.db);
    await sql`SELECT ${sql.id(test.schema, "ensure_history_partitions")}((now() AT TIME ZONE 'UTC')::date - 4, (now() AT TIME ZONE 'UTC')::date)`.execute(
      test.db,
    );
    await moveFinishedRows(test.db, test.schema);
    await sql`VACUUM ANALYZE ${sql.id(test.schema, "finished_jobs")}`.execute(test.db);
    const params = { windowMs: 3_600_000, buckets: 12, scanLimit: 50_000 };
    // Planned as the browser runs it (see PostgresJobBrowser): partitions of a thousand rows are cheaper to scan otherwise.
    const explained = await test.db.transaction().execute(async (trx) => {
      await sql`SELECT set_config('enable_seqscan', 'off', true)`.execute(trx);
      const statement = readRecentThroughputStatement(test.schema, params, 300_000);
      const { rows } = await sql<{ "QUERY PLAN": string }>`EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) ${statement}`.execute(trx);
      return rows.map((row) => row["QUERY PLAN"]).join("\n");
    });
    expect(explained, explained).to.match(/Bitmap Index Scan on finished_jobs_\d{8}_finished_at_idx/);
    // Never a walk of ids. The (queue, state, id) index may be planned for a day that holds few rows (today's,
    // just after midnight UTC): it reads them by state, not in id order.
    expect(explained, explained).to.not.match(/finished_jobs_(\d{8}|kept|default)_id_idx/);
    const filled = await sql<{ name: string; old: boolean }>`SELECT c.relname AS name,
           bool_and(f.finished_at < date_trunc('day', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' - interval '1 day') AS old
      FROM ${sql.id(test.schema, "finished_jobs")} AS f JOIN pg_class AS c ON c.oid = f.tableoid GROUP BY 1`.execute(test.db);
    for (const { name } of filled.rows) expect(explained, explained).to.not.contain(`Seq Scan on ${name} `);
    // The days before yesterday hold jobs, and are never read.
    const old = filled.rows.filter((row) => row.old);
    expect(old.length).to.be.at.least(1);
    // "Bitmap Heap Scan on <day>" or "Index Scan using <index> on <day>": either way, never executed.
    for (const { name } of old) expect(explained, explained).to.match(new RegExp(` on ${name} [^\\n]*\\(never executed\\)`));
  });
});
