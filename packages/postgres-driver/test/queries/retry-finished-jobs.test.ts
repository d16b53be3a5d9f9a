import { expect } from "chai";
import { DatabaseError, ErrorCode, errorCodeOf } from "@stint/core";
import { eventually, newJob, rejectionOf } from "@stint/core/testing";
import { sql } from "kysely";
import { createTestSchema, type TestSchema } from "../../src/testing";

/** A job row as a test reads it back, wherever it is kept. */
interface StoredJob {
  readonly place: "jobs" | "finished_jobs";
  readonly id: string;
  readonly state: string;
  readonly attempts: number;
  readonly max_attempts: number;
  readonly locked_by: string | null;
  readonly locked_until: Date | null;
  readonly finished_at: Date | null;
  readonly last_error: string | null;
  readonly due: boolean;
}

describe("retrying finished jobs, in finished_jobs or still in jobs", () => {
  let test: TestSchema;

  beforeEach(async () => {
    test = await createTestSchema({ maxConnections: 6 });
  });
  afterEach(() => test.drop());

  /** The rows of job `id` in `jobs` and in `finished_jobs` (one, unless something is wrong). */
  async function rowsOf(id: string): Promise<StoredJob[]> {
    const columns = sql`id::text AS id, state, attempts, max_attempts, locked_by, locked_until, finished_at, last_error, run_at <= now() AS due`;
    const { rows } = await sql<StoredJob>`SELECT 'jobs' AS place, ${columns} FROM ${sql.id(test.schema, "jobs")} WHERE id = ${id}::bigint
      UNION ALL SELECT 'finished_jobs', ${columns} FROM ${sql.id(test.schema, "finished_jobs")} WHERE id = ${id}::bigint`.execute(test.db);
    return rows;
  }

  /** Enqueues a job on `queue`, claims it and lets it die after its one attempt: it moves to finished_jobs. */
  async function deadJob(queue: string, options: { readonly dedupeKey?: string } = {}): Promise<string> {
    const { id } = await test.store.enqueue(newJob(queue, { dies: true }, { maxAttempts: 1, ...options }));
    const [claimed] = await test.store.claimBatch({ queue, workerId: "w1", limit: 1, leaseMs: 60_000 });
    expect(claimed?.id).to.equal(id);
    const failure = { message: "boom", code: "STINT_PERMANENT" };
    expect(await test.store.markJobsDead({ workerId: "w1", jobs: [{ ...claimed!, failure }] })).to.deep.equal([id]);
    return id;
  }

  /** A dead row written before version 15: still in `jobs`, as finished jobs were then. */
  async function legacyDeadJob(queue: string, finishedAgoMs: number, dedupeKey: string | null = null): Promise<string> {
    const { rows } = await sql<{ id: string }>`INSERT INTO ${sql.id(test.schema, "jobs")}
        (queue, payload, state, attempts, max_attempts, locked_by, started_at, finished_at, updated_at, last_error, error_code, dedupe_key)
      VALUES (${queue}, '{"legacy":true}', 'dead', 3, 3, 'w0', now() - ${finishedAgoMs + 1_000} * interval '1 millisecond',
              now() - ${finishedAgoMs} * interval '1 millisecond', now() - ${finishedAgoMs} * interval '1 millisecond',
              'old failure', 'STINT_PERMANENT', ${dedupeKey})
      RETURNING id::text AS id`.execute(test.db);
    return rows[0]!.id;
  }

  it("brings a dead job back from finished_jobs to jobs under its id, queued now with a fresh budget", async () => {
    const id = await deadJob("mail");
    expect((await rowsOf(id)).map((row) => [row.place, row.state])).to.deep.equal([["finished_jobs", "dead"]]);

    expect(await test.store.retryJob({ id })).to.equal(true);

    const rows = await rowsOf(id);
    expect(rows).to.have.length(1);
    expect(rows[0]).to.include({ place: "jobs", id, state: "queued", attempts: 1, max_attempts: 2, locked_by: null, locked_until: null, finished_at: null });
    expect(rows[0]).to.include({ due: true, last_error: "boom" });
    const [again] = await test.store.claimBatch({ queue: "mail", workerId: "w2", limit: 1, leaseMs: 60_000 });
    expect(again).to.include({ id, attempt: 2, maxAttempts: 2 });
  });

  it("brings a cancelled job back from finished_jobs", async () => {
    const { id } = await test.store.enqueue(newJob("mail", {}, { delayMs: 3_600_000 }));
    expect(await test.store.cancelJob({ id })).to.equal(true);
    expect((await rowsOf(id)).map((row) => [row.place, row.state])).to.deep.equal([["finished_jobs", "cancelled"]]);

    expect(await test.store.retryJob({ id })).to.equal(true);

    expect((await rowsOf(id)).map((row) => [row.place, row.state, row.due])).to.deep.equal([["jobs", "queued", true]]);
    expect(await test.store.retryJob({ id }), "a queued job is not retried").to.equal(false);
  });

  it("retries a dead row written before version 15 in place, in jobs", async () => {
    const id = await legacyDeadJob("mail", 60_000);

    expect(await test.store.retryJob({ id })).to.equal(true);

    const rows = await rowsOf(id);
    expect(rows).to.have.length(1);
    expect(rows[0]).to.include({ place: "jobs", state: "queued", attempts: 3, max_attempts: 6, locked_by: null, finished_at: null, due: true });
  });

  it("refuses a succeeded job in finished_jobs, and leaves it there", async () => {
    const { id } = await test.store.enqueue(newJob("mail", {}));
    const [claimed] = await test.store.claimBatch({ queue: "mail", workerId: "w1", limit: 1, leaseMs: 60_000 });
    await test.store.completeJobs({ workerId: "w1", jobs: [{ ...claimed!, resultJson: null, durationMs: 1 }] });

    expect(await test.store.retryJob({ id })).to.equal(false);
    expect((await rowsOf(id)).map((row) => [row.place, row.state])).to.deep.equal([["finished_jobs", "succeeded"]]);
  });

  it("refuses a job in finished_jobs whose dedupe key an active job now holds, naming it, and leaves it dead", async () => {
    const id = await deadJob("mail", { dedupeKey: "invoice:812" });
    const holder = await test.store.enqueue(newJob("mail", {}, { dedupeKey: "invoice:812", delayMs: 3_600_000 }));
    expect(holder.duplicate).to.equal(false);

    const error = await rejectionOf(test.store.retryJob({ id }));

    expect(error).to.be.instanceOf(DatabaseError);
    expect(error).to.include({ sqlState: "23505" });
    expect(errorCodeOf(error)).to.equal(ErrorCode.Database);
    expect(error.message).to.contain(`active job ${holder.id}`).and.to.contain('"invoice:812"');
    expect((await rowsOf(id)).map((row) => [row.place, row.state])).to.deep.equal([["finished_jobs", "dead"]]);
  });

  it("retries a legacy dead row that is being moved to finished_jobs at that moment, once the move commits", async () => {
    const id = await legacyDeadJob("mail", 60_000);
    const jobs = sql.id(test.schema, "jobs");
    const finished = sql.id(test.schema, "finished_jobs");
    // The mover's statement, held open: the retry's update waits for the row, then finds it gone from jobs.
    const { retrying } = await test.db.transaction().execute(async (mover) => {
      await sql`WITH removed AS (DELETE FROM ${jobs} WHERE id = ${id}::bigint RETURNING *) INSERT INTO ${finished} SELECT * FROM removed`.execute(mover);
      const retrying = test.store.retryJob({ id });
      // Asked on another connection: a transaction sees pg_stat_activity as it was at its first look.
      await eventually(
        async () => {
          const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM pg_stat_activity
            WHERE application_name = ${test.applicationName} AND wait_event_type = 'Lock' AND wait_event = 'transactionid'`.execute(test.db);
          return rows[0]!.n === 1;
        },
        { what: "the retry to wait for the moving transaction" },
      );
      return { retrying }; // awaited once the move has committed
    });

    expect(await retrying).to.equal(true);
    expect((await rowsOf(id)).map((row) => [row.place, row.state])).to.deep.equal([["jobs", "queued"]]);
  });

  it("retryDeadJobs takes dead jobs from both tables, oldest death first", async () => {
    const oldest = await legacyDeadJob("mail", 3_600_000);
    const fresh = await deadJob("mail");
    const older = await legacyDeadJob("mail", 60_000);
    const cancelled = await test.store.enqueue(newJob("mail", {}));
    await test.store.cancelJob({ id: cancelled.id });
    const elsewhere = await deadJob("sms");

    expect(await test.store.retryDeadJobs({ queue: "mail", limit: 2 })).to.equal(2);
    expect((await rowsOf(oldest)).map((row) => [row.place, row.state, row.max_attempts])).to.deep.equal([["jobs", "queued", 6]]);
    expect((await rowsOf(older)).map((row) => [row.place, row.state, row.max_attempts])).to.deep.equal([["jobs", "queued", 6]]);
    expect((await rowsOf(fresh)).map((row) => [row.place, row.state])).to.deep.equal([["finished_jobs", "dead"]]);

    expect(await test.store.retryDeadJobs({ queue: "mail", limit: 2 })).to.equal(1);
    expect((await rowsOf(fresh)).map((row) => [row.place, row.state, row.max_attempts, row.finished_at])).to.deep.equal([["jobs", "queued", 2, null]]);
    expect(await test.store.retryDeadJobs({ queue: "mail", limit: 2 })).to.equal(0);
    expect((await rowsOf(cancelled.id)).map((row) => [row.place, row.state])).to.deep.equal([["finished_jobs", "cancelled"]]);
    expect((await rowsOf(elsewhere)).map((row) => [row.place, row.state])).to.deep.equal([["finished_jobs", "dead"]]);
  });

  it("retryDeadJobs queues one of the dead jobs sharing a free key across both tables, and none whose key is held", async () => {
    const legacyK = await legacyDeadJob("mail", 3_600_000, "k");
    const finishedK = await deadJob("mail", { dedupeKey: "k" });
    const legacyHeld = await legacyDeadJob("mail", 60_000, "h");
    const finishedHeld = await deadJob("mail", { dedupeKey: "h" });
    const holder = await test.store.enqueue(newJob("mail", {}, { dedupeKey: "h", delayMs: 3_600_000 }));
    expect(holder.duplicate).to.equal(false);

    expect(await test.store.retryDeadJobs({ queue: "mail", limit: 10 })).to.equal(1);
    expect(await test.store.retryDeadJobs({ queue: "mail", limit: 10 })).to.equal(0);

    // Of the two that share "k", the one that died last comes back.
    expect((await rowsOf(finishedK)).map((row) => [row.place, row.state])).to.deep.equal([["jobs", "queued"]]);
    expect((await rowsOf(legacyK)).map((row) => [row.place, row.state])).to.deep.equal([["jobs", "dead"]]);
    expect((await rowsOf(legacyHeld)).map((row) => row.state)).to.deep.equal(["dead"]);
    expect((await rowsOf(finishedHeld)).map((row) => [row.place, row.state])).to.deep.equal([["finished_jobs", "dead"]]);
  });

  it("retryDeadJobs skips a dead job in finished_jobs that another transaction holds locked", async () => {
    const locked = await deadJob("mail");
    const free = await deadJob("mail");
    const finished = sql.id(test.schema, "finished_jobs");

    const retried = await test.db.transaction().execute(async (holder) => {
      await sql`SELECT 1 FROM ${finished} WHERE id = ${locked}::bigint FOR UPDATE`.execute(holder);
      return test.store.retryDeadJobs({ queue: "mail", limit: 10 });
    });

    expect(retried).to.equal(1);
    expect((await rowsOf(locked)).map((row) => [row.place, row.state])).to.deep.equal([["finished_jobs", "dead"]]);
    expect((await rowsOf(free)).map((row) => [row.place, row.state])).to.deep.equal([["jobs", "queued"]]);
  });
});
