import { expect } from "chai";
import { sql } from "kysely";
import { PostgresJobBrowser } from "../../src/postgres-job-browser";
import { browseJobsStatement, type BrowseJobsParams, type JobPage } from "../../src/queries/browse-jobs";
import { createdIdRange } from "../../src/queries/created-id-range";
import { createTestSchema, type TestSchema } from "../../src/testing";

/** The dead jobs of the rare queue, among 50,000 finished ones. */
const RARE_IDS = ["1000", "2000", "3000"];
const FINISHED = 50_000;
const WAITING = 3_000;
/** The queue written by SQL that breaks the naming rule (upper case, a space, a slash, a non-ASCII letter). */
const ODD_QUEUE = "Odd Queue/Ü";

describe("PostgresJobBrowser's filters on 50,000 finished and 3,000 waiting jobs", () => {
  let test: TestSchema;
  let browser: PostgresJobBrowser;
  /** When the first finished job was created; job `g` was created `8 g - 1` seconds later. */
  let base: Date;

  /**
   * The shape of a large history, scaled down: finished jobs with ids
   * 1..50,000, created 8 s apart over the last four and a half days, in ten
   * queues, mostly succeeded (one in 97 dead with a timeout, one in 101
   * cancelled, one in 7 retried once), and three dead jobs of the queue
   * `rare` with an error no other job has, old enough that no window of
   * the newest 5,000 jobs reaches them. Then 3,000 waiting jobs, 1,125 of
   * them in `queue-5`, and 4 of a queue whose name breaks the naming rule.
   */
  async function seed(): Promise<void> {
    const finished = sql.id(test.schema, "finished_jobs");
    const { rows } = await sql<{ base: Date }>`SELECT date_trunc('second', now()) - ${FINISHED * 8 + 3_600} * interval '1 second' AS base`.execute(test.db);
    base = rows[0]!.base;
    await sql`SELECT ${sql.id(test.schema, "ensure_history_partitions")}((now() AT TIME ZONE 'UTC')::date - 6, (now() AT TIME ZONE 'UTC')::date)`.execute(
      test.db,
    );
    await sql`INSERT INTO ${finished} (id, queue, payload, state, attempts, created_at, run_at, updated_at, finished_at, last_error)
SELECT g, CASE WHEN g IN (1000, 2000, 3000) THEN 'rare' ELSE 'queue-' || (g % 10) END, '{}'::jsonb,
       CASE WHEN g IN (1000, 2000, 3000) OR g % 97 = 0 THEN 'dead' WHEN g % 101 = 0 THEN 'cancelled' ELSE 'succeeded' END,
       1, t - interval '1 second', t - interval '1 second', t, t,
       CASE WHEN g IN (1000, 2000, 3000) THEN 'Error: rare gateway meltdown'
            WHEN g % 97 = 0 THEN 'Error: timeout after 30 s'
            WHEN g % 7 = 0 THEN 'Error: connection reset, retried' END
  FROM generate_series(1, ${FINISHED}::integer) AS g, LATERAL (SELECT ${base}::timestamptz + g * interval '8 seconds' AS t) AS at`.execute(test.db);
    await sql`INSERT INTO ${sql.id(test.schema, "jobs")} (id, queue, payload, state, created_at, run_at, updated_at)
SELECT ${FINISHED}::integer + g, CASE WHEN g <= 1125 THEN 'queue-5' WHEN g > ${WAITING - 4}::integer THEN ${ODD_QUEUE} ELSE 'queue-' || (g % 4) END,
       '{}'::jsonb, 'queued', now() - (${WAITING}::integer - g) * interval '10 milliseconds', now(), now()
  FROM generate_series(1, ${WAITING}::integer) AS g`.execute(test.db);
    await sql`SELECT setval(${`${test.schema}.jobs_id_seq`}::regclass, ${FINISHED + WAITING + 1}::bigint)`.execute(test.db);
    await sql`VACUUM ANALYZE ${finished}`.execute(test.db);
    await sql`VACUUM ANALYZE ${sql.id(test.schema, "jobs")}`.execute(test.db);
  }

  /** The ids SQL says match `where` (a condition on the row of `all_jobs`), newest first. */
  async function truth(where: ReturnType<typeof sql>): Promise<string[]> {
    const { rows } = await sql<{ id: string }>`SELECT id::text FROM ${sql.id(test.schema, "all_jobs")} WHERE ${where} ORDER BY id DESC`.execute(test.db);
    return rows.map((row) => row.id);
  }

  /** Every page older than the first, following `nextBeforeId`; the pages. */
  async function olderPages(on: PostgresJobBrowser, params: BrowseJobsParams): Promise<JobPage[]> {
    const pages: JobPage[] = [];
    let page = await on.browseJobs(params);
    pages.push(page);
    while (page.nextBeforeId !== null) {
      expect(pages.length, "pages").to.be.below(100);
      page = await on.browseJobs({ ...params, beforeId: page.nextBeforeId });
      pages.push(page);
    }
    return pages;
  }

  before(async () => {
    test = await createTestSchema({ prefix: "stint_filters" });
    browser = new PostgresJobBrowser({ db: test.db, schema: test.schema });
    await seed();
  });
  after(async () => {
    await test.drop();
  });

  it("has the indexes of migration 19, the trigram ones included where pg_trgm could be installed", async () => {
    const { rows } = await sql<{ name: string }>`SELECT indexname AS name FROM pg_indexes
      WHERE schemaname = ${test.schema} AND indexname IN ('finished_jobs_queue_idx', 'jobs_last_error_trgm_idx', 'finished_jobs_last_error_trgm_idx')
      ORDER BY 1`.execute(test.db);
    const { rows: extension } = await sql<{ found: boolean }>`SELECT EXISTS (SELECT FROM pg_extension WHERE extname = 'pg_trgm') AS found`.execute(test.db);
    const expected = extension[0]!.found
      ? ["finished_jobs_last_error_trgm_idx", "finished_jobs_queue_idx", "jobs_last_error_trgm_idx"]
      : ["finished_jobs_queue_idx"];
    expect(rows.map((row) => row.name)).to.deep.equal(expected);
    expect(await browser.browseIndexes()).to.deep.equal({ errorText: extension[0]!.found });
  });

  it("finds the 3 rare dead jobs on the first page by queue, by queue and state, and by error text", async () => {
    for (const params of [
      { queue: "rare" },
      { queue: "rare", states: ["dead"] as const },
      { errorText: "gateway MELTDOWN" },
      { states: ["dead"] as const, errorText: "meltdown" },
    ]) {
      const page = await browser.browseJobs({ ...params, limit: 50, scanLimit: 5_000 });
      expect(
        page.jobs.map((job) => job.id),
        JSON.stringify(params),
      ).to.deep.equal([...RARE_IDS].reverse());
      expect(page.nextBeforeId, JSON.stringify(params)).to.equal(null);
      expect(page.searched, JSON.stringify(params)).to.equal(null);
    }
    expect(await browser.countJobsUpTo({ queue: "rare", states: ["dead"], cap: 10_000 })).to.equal(3);
  });

  it("lists every queued job of a queue across pages, older then newer, by keyset", async () => {
    const expected = await truth(sql`queue = 'queue-5' AND state = 'queued'`);
    expect(expected).to.have.lengthOf(1_125);
    const params: BrowseJobsParams = { queue: "queue-5", states: ["queued"], limit: 50, scanLimit: 5_000 };
    const pages = await olderPages(browser, params);
    expect(pages.flatMap((page) => page.jobs.map((job) => job.id))).to.deep.equal(expected);
    expect(pages).to.have.lengthOf(23);
    expect(pages[0]!.newerAfterId, "the first page is the newest").to.equal(null);
    // Back up from the oldest page to the newest, following newerAfterId.
    const newer: string[][] = [];
    let cursor = pages.at(-1)!.newerAfterId;
    while (cursor !== null) {
      const page = await browser.browseJobs({ ...params, afterId: cursor });
      newer.unshift(page.jobs.map((job) => job.id));
      cursor = page.newerAfterId;
      expect(newer.length, "newer pages").to.be.below(30);
    }
    expect([...newer.flat(), ...pages.at(-1)!.jobs.map((job) => job.id)]).to.deep.equal(expected);
    expect(await browser.countJobsUpTo({ queue: "queue-5", states: ["queued"], cap: 10_000 })).to.equal(1_125);
  });

  it("lists every job of a time range, the finished and the waiting, and nothing outside it", async () => {
    const ranges: [Date, Date][] = [
      [new Date(base.getTime() + 20_000 * 8_000), new Date(base.getTime() + 20_400 * 8_000 + 500)],
      [new Date(base.getTime() + (FINISHED - 10) * 8_000), new Date(Date.now() + 60_000)],
    ];
    for (const [from, to] of ranges) {
      const expected = await truth(sql`created_at >= ${from.toISOString()}::timestamptz AND created_at < ${to.toISOString()}::timestamptz`);
      expect(expected.length).to.be.at.least(400);
      const pages = await olderPages(browser, { createdFrom: from, createdTo: to, limit: 50, scanLimit: 5_000 });
      expect(pages.flatMap((page) => page.jobs.map((job) => job.id))).to.deep.equal(expected);
      expect(pages.every((page) => page.searched === null)).to.equal(true);
    }
    // With a state and a queue, in the old range.
    const [from, to] = ranges[0]!;
    const dead = await truth(sql`state = 'dead' AND created_at >= ${from.toISOString()}::timestamptz AND created_at < ${to.toISOString()}::timestamptz`);
    const page = await browser.browseJobs({ states: ["dead"], createdFrom: from, createdTo: to, limit: 50, scanLimit: 5_000 });
    expect(page.jobs.map((job) => job.id)).to.deep.equal(dead);
  });

  it("maps a time range to an id range that holds it, from a few probes", async () => {
    const from = new Date(base.getTime() + 20_000 * 8_000);
    const to = new Date(base.getTime() + 20_400 * 8_000);
    const range = await createdIdRange(test.db, test.schema, { from, to });
    // A minute of margin each side: 60 s / 8 s = 7.5 jobs.
    expect(Number(range.low)).to.be.within(20_000 - 8, 20_000);
    expect(Number(range.high)).to.be.within(20_400, 20_400 + 9);
    expect(await createdIdRange(test.db, test.schema, {})).to.deep.equal({ low: null, high: null });
  });

  it("finds the error text without the trigram indexes too, within a window that says what it covered", async () => {
    await test.db.transaction().execute(async (trx) => {
      await sql`DROP INDEX IF EXISTS ${sql.id(test.schema, "jobs_last_error_trgm_idx")}`.execute(trx);
      await sql`DROP INDEX IF EXISTS ${sql.id(test.schema, "finished_jobs_last_error_trgm_idx")}`.execute(trx);
    });
    try {
      const plain = new PostgresJobBrowser({ db: test.db, schema: test.schema });
      expect(await plain.browseIndexes()).to.deep.equal({ errorText: false });
      const first = await plain.browseJobs({ errorText: "meltdown", limit: 50, scanLimit: 5_000 });
      expect(first.jobs).to.have.lengthOf(0);
      expect(first.searched).to.deep.equal({ scanned: 5_000, matched: 0, complete: false });
      const pages = await olderPages(plain, { errorText: "meltdown", limit: 50, scanLimit: 5_000 });
      expect(pages.flatMap((page) => page.jobs.map((job) => job.id))).to.deep.equal([...RARE_IDS].reverse());
      expect(pages.length).to.be.within(10, 12);
      // Other filters still come from their indexes: the rare queue's dead jobs are on the first page.
      const rare = await plain.browseJobs({ queue: "rare", errorText: "meltdown", limit: 50, scanLimit: 5_000 });
      expect(rare.jobs.map((job) => job.id)).to.deep.equal([...RARE_IDS].reverse());
      expect(rare.searched).to.deep.equal({ scanned: 3, matched: 3, complete: true });
    } finally {
      await sql`CREATE INDEX IF NOT EXISTS jobs_last_error_trgm_idx ON ${sql.id(test.schema, "jobs")} USING gin (last_error gin_trgm_ops) WHERE last_error IS NOT NULL`
        .execute(test.db)
        .catch(() => undefined);
      await sql`CREATE INDEX IF NOT EXISTS finished_jobs_last_error_trgm_idx ON ${sql.id(test.schema, "finished_jobs")} USING gin (last_error gin_trgm_ops) WHERE last_error IS NOT NULL`
        .execute(test.db)
        .catch(() => undefined);
    }
  });

  it("lists a queue whose name breaks the naming rule", async () => {
    const page = await browser.browseJobs({ queue: ODD_QUEUE, limit: 50, scanLimit: 5_000 });
    expect(page.jobs.map((job) => job.queue)).to.deep.equal([ODD_QUEUE, ODD_QUEUE, ODD_QUEUE, ODD_QUEUE]);
    expect(await browser.countJobsUpTo({ queue: ODD_QUEUE, cap: 10_000 })).to.equal(4);
  });

  it("estimates the number of jobs from the planner's statistics", async () => {
    const estimate = await browser.estimateJobs();
    expect(estimate.finished).to.be.within(FINISHED * 0.9, FINISHED * 1.1);
    expect(estimate.active).to.be.within(WAITING * 0.9, WAITING * 1.1);
  });

  describe("plans", () => {
    /** The plan of `params`' statement as the browser runs it: sequential scans off. */
    async function plan(params: BrowseJobsParams, errorText = true): Promise<string> {
      const range =
        params.createdFrom === undefined && params.createdTo === undefined
          ? undefined
          : await createdIdRange(test.db, test.schema, { from: params.createdFrom, to: params.createdTo });
      const { query } = browseJobsStatement(test.schema, params, { errorText }, range);
      return test.db.transaction().execute(async (trx) => {
        await sql`SELECT set_config('enable_seqscan', 'off', true)`.execute(trx);
        const { rows } = await sql<{ "QUERY PLAN": string }>`EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) ${query}`.execute(trx);
        return rows.map((row) => row["QUERY PLAN"]).join("\n");
      });
    }

    /** The largest number of rows any node of `explained` produced in one loop. */
    function widest(explained: string): number {
      return Math.max(...[...explained.matchAll(/actual rows=(\d+)/g)].map((match) => Number(match[1])));
    }

    it("reads a queue's dead jobs through finished_jobs_queue_idx, as index ranges", async () => {
      const explained = await plan({ queue: "rare", states: ["dead"], limit: 51, scanLimit: 5_000 });
      expect(explained, explained).to.match(/finished_jobs_\w+_queue_state_id_idx/);
      expect(explained, explained).to.not.match(/Seq Scan/);
      expect(widest(explained), explained).to.be.at.most(51);
    });

    it("reads a queue's waiting jobs from jobs alone, through an index, never the history", async () => {
      const explained = await plan({ queue: "queue-5", states: ["queued"], limit: 51, scanLimit: 5_000 });
      // jobs_claim_idx (every waiting job of the queue, sorted) or a walk of jobs_pkey that stops at the page: the planner weighs them.
      expect(explained, explained)
        .to.match(/jobs_claim_idx|jobs_pkey/)
        .and.not.contain("finished_jobs");
      expect(explained, explained).to.not.match(/Seq Scan/);
    });

    it("reads the error text through the trigram indexes", async () => {
      const explained = await plan({ errorText: "meltdown", limit: 51, scanLimit: 5_000 });
      expect(explained, explained).to.match(/Bitmap Index Scan on finished_jobs_\w+_last_error_idx/);
      expect(explained, explained).to.not.match(/Seq Scan/);
      expect(widest(explained), explained).to.be.below(1_000);
    });

    it("reads a time range as an id range of each index, not a walk from the newest job", async () => {
      const from = new Date(base.getTime() + 20_000 * 8_000);
      const to = new Date(base.getTime() + 20_400 * 8_000);
      const explained = await plan({ createdFrom: from, createdTo: to, limit: 51, scanLimit: 5_000 });
      expect(explained, explained).to.match(/Index Cond: \(\(id >= '\d+'::bigint\) AND \(id < '\d+'::bigint\)\)/);
      expect(explained, explained).to.not.match(/Seq Scan/);
      expect(widest(explained), explained).to.be.at.most(51 + 20);
    });
  });
});
