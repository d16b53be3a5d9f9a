import {
  defineJob,
  ErrorCode,
  JobClient,
  JobFailedError,
  JobNotFoundError,
  PermanentError,
  retryAfter,
  step,
  WaitTimeoutError,
  WorkflowFailedError,
  type JobContext,
} from "@stint/core";
import { buildNewJob } from "@stint/core/driver";
import { expect } from "chai";
import { sql } from "kysely";
import { PostgresJobStore, type PostgresCompletionSource } from "../src";
import { moveToFinished } from "../src/queries/finished-jobs";
import { createTestSchema, type TestSchema } from "../src/testing";
import { ScriptedWorker, type Task } from "./worker-lifecycle/scripted-worker";
import { eventually } from "@stint/core/testing";
import { MAX_WATCHED_STEPS } from "@stint/core/internal";
import { deferred } from "./support/deferred";
import { testCompletions, type TestCompletions } from "./support/test-completions";

/** A kind with a declared result, so waitFor's result is typed. */
const Square = defineJob<Task, { square: number }>("square", { maxAttempts: 3 });

describe("client.waitFor against PostgreSQL", () => {
  let test: TestSchema;
  let completions: PostgresCompletionSource;
  let store: PostgresJobStore;
  let client: JobClient;
  let applicationName: string;
  let helpers: TestCompletions;

  beforeEach(async () => {
    test = await createTestSchema();
    helpers = testCompletions(test);
    ({ source: completions, applicationName } = helpers);
    store = new PostgresJobStore({ db: test.db, schema: test.schema, completions });
    client = new JobClient(store);
  });
  afterEach(async () => {
    await completions.close();
    await test.drop();
  });

  function squareWorker(process: (item: Task, ctx: JobContext) => Promise<unknown>): ScriptedWorker {
    return new ScriptedWorker(store, { job: Square, process }, { concurrency: 4 });
  }

  const listeners = (): Promise<number> => helpers.connections();
  const registeredWaits = (): Promise<number> => helpers.registeredWaits();

  it("resolves with the typed result on the completion's hint, well before its 5 s poll, with a real worker running the job", async () => {
    const gaps: number[] = [];
    for (let round = 0; round < 5; round += 1) {
      const job = await client.enqueue(Square, { n: round });
      const resolved = client.waitFor(job).then((result) => ({ result, at: Date.now() }));
      await eventually(() => completions.watchedJobs === 1, { timeoutMs: 10_000, what: "the wait to watch the job" });
      const run = squareWorker(async (item) => ({ square: item.n * item.n })).start();
      const { result, at } = await resolved;
      const square: number = result.square;
      expect(square).to.equal(round * round);
      await run;
      // The completion moved the job to finished_jobs, where the wait found it.
      const { rows } = await sql<{
        finished: Date;
      }>`SELECT finished_at AS finished FROM ${sql.id(test.schema, "finished_jobs")} WHERE id = ${job.id}::bigint`.execute(test.db);
      gaps.push(at - rows[0]!.finished.getTime());
    }
    // finished_at is the completing statement's start, before its commit: each gap is at least the commit-to-resolve time.
    // The bound is a tenth of the poll interval: only the hint can meet it, and it still does on a loaded machine.
    const median = [...gaps].sort((a, b) => a - b)[2]!;
    expect(median, `gaps from finished_at to resolve: ${gaps.join(", ")} ms`).to.be.below(500);
  });

  it("rejects with a JobFailedError carrying the last error for a job that dies", async () => {
    const job = await client.enqueue(Square, { n: 3 });
    const waiting = client.waitFor(job).catch((thrown: unknown) => thrown);
    await squareWorker(async () => {
      throw new PermanentError("3 is not a square we compute");
    }).start();
    const error = await waiting;
    expect(error).to.be.instanceOf(JobFailedError).and.include({
      code: ErrorCode.JobFailed,
      jobId: job.id,
      queue: "square",
      state: "dead",
      attempts: 1,
      lastErrorCode: ErrorCode.Permanent,
    });
    expect((error as JobFailedError).lastError).to.match(/^PermanentError: 3 is not a square we compute/);
  });

  it("rejects with a JobFailedError in state cancelled when an operator cancels the job it waits for", async () => {
    const job = await client.enqueue(Square, { n: 3 }, { delayMs: 60_000 });
    const waiting = client.waitFor(job, { pollIntervalMs: 60_000 }).catch((thrown: unknown) => thrown);
    await eventually(() => completions.watchedJobs === 1, { timeoutMs: 10_000, what: "the wait to watch the job" });
    expect(await store.cancelJob({ id: job.id })).to.equal(true);
    expect(await waiting)
      .to.be.instanceOf(JobFailedError)
      .and.include({ state: "cancelled", jobId: job.id });
  });

  it("keeps waiting through a failed attempt and resolves when the retry succeeds", async () => {
    const job = await client.enqueue(Square, { n: 4 });
    let attempts = 0;
    const waiting = client.waitFor(job, { pollIntervalMs: 60_000 });
    await squareWorker(async (item) => {
      attempts += 1;
      if (attempts === 1) throw retryAfter(0, new Error("the calculator is warming up"));
      return { square: item.n * item.n };
    }).start();
    expect(await waiting).to.deep.equal({ square: 16 });
    expect(attempts).to.equal(2);
  });

  it("lets 200 waiters share one listening connection, and closes it when the last one leaves", async () => {
    const jobs = await client.enqueueMany(
      Square,
      Array.from({ length: 200 }, (_, n) => ({ payload: { n } })),
    );
    expect(await listeners()).to.equal(0);
    const waits = jobs.map((job) => client.waitFor(job, { pollIntervalMs: 60_000 }));
    await eventually(async () => (await registeredWaits()) === 200, { timeoutMs: 10_000, what: "every wait to register its job" });
    expect(await listeners()).to.equal(1);
    await squareWorker(async (item) => ({ square: item.n * item.n })).start();
    const results = await Promise.all(waits);
    expect(results.map((result) => result.square)).to.deep.equal(Array.from({ length: 200 }, (_, n) => n * n));
    await eventually(async () => (await listeners()) === 0, { timeoutMs: 10_000, what: "the listening connection to close" });
  });

  it("finds a finish whose notification never came at its next poll, moved to finished_jobs or left in jobs", async () => {
    const jobs = sql.id(test.schema, "jobs");
    const finishes = {
      // As this version finishes a job, but by hand: no notify_awaited, so no NOTIFY.
      moved: (id: string) => sql`WITH removed AS (DELETE FROM ${jobs} WHERE id = ${id}::bigint RETURNING *),
        moved AS (${moveToFinished(test.schema, "removed", { state: sql`'succeeded'`, result: sql`'{"square":25}'::jsonb`, finished_at: sql`now()` })})
        SELECT 1`,
      // As a worker of a version before 15 finishes it, in place, during a rolling upgrade.
      "in place": (id: string) => sql`UPDATE ${jobs} SET state = 'succeeded', result = '{"square":25}', finished_at = now() WHERE id = ${id}::bigint`,
    };
    for (const [how, finish] of Object.entries(finishes)) {
      const job = await client.enqueue(Square, { n: 5 });
      const waiting = client.waitFor(job, { pollIntervalMs: 200 });
      await eventually(() => completions.watchedJobs === 1, { timeoutMs: 10_000, what: "the wait to watch the job" });
      await finish(job.id).execute(test.db);
      expect(await waiting, how).to.deep.equal({ square: 25 });
      await eventually(() => completions.watchedJobs === 0, { timeoutMs: 10_000, what: "the wait to end" });
    }
  });

  it("finds a finish that happened while its listening connection was terminated, once it reconnects", async () => {
    const job = await client.enqueue(Square, { n: 6 });
    const waiting = client.waitFor(job, { pollIntervalMs: 60_000 });
    await eventually(() => completions.listening && completions.watchedJobs === 1, { timeoutMs: 10_000, what: "the wait to watch the job" });
    const finishing = deferred();
    const run = squareWorker(async (item) => {
      await finishing.promise;
      return { square: item.n * item.n };
    }).start();
    await eventually(async () => (await store.getJob({ id: job.id }))?.state === "running", { timeoutMs: 10_000, what: "the job to run" });
    await sql`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = ${applicationName}`.execute(test.db);
    finishing.resolve();
    await run;
    expect(await waiting).to.deep.equal({ square: 36 });
  });

  it("rejects with a WaitTimeoutError naming the job, and with the signal's reason on abort", async () => {
    const job = await client.enqueue(Square, { n: 7 });
    // Long enough for the wait's first read of the job on a loaded machine (100 ms was not always).
    const timedOut = await client.waitFor(job, { timeoutMs: 1_000 }).catch((thrown: unknown) => thrown);
    expect(timedOut).to.be.instanceOf(WaitTimeoutError).and.include({ jobId: job.id, timeoutMs: 1_000, lastState: "queued" });
    const stop = new AbortController();
    const waiting = client.waitFor(Square, job.id, { signal: stop.signal }).catch((thrown: unknown) => thrown);
    await eventually(() => completions.watchedJobs === 1, { timeoutMs: 10_000, what: "the wait to watch the job" });
    stop.abort(new Error("the request was cancelled"));
    expect(await waiting).to.have.property("message", "the request was cancelled");
    await eventually(() => completions.watchedJobs === 0, { timeoutMs: 10_000, what: "the watch to end" });
  });

  it("rejects a workflow's wait on the hint of a final step's death while a final step enqueued before it still runs", async () => {
    const workflow = await client.enqueueWorkflow("two-squares", { first: step(Square, { n: 1 }), second: step(Square, { n: 2 }) });
    const [first, second] = await store.claimBatch({ queue: Square.name, workerId: "w1", limit: 2, leaseMs: 60_000 });
    const waiting = client.waitFor(workflow, { pollIntervalMs: 60_000 }).catch((thrown: unknown) => thrown);
    await eventually(async () => (await registeredWaits()) === 2, { timeoutMs: 10_000, what: "both final steps to be watched" });
    await store.markJobsDead({ workerId: "w1", jobs: [{ id: second!.id, attempt: second!.attempt, failure: { message: "Error: no ink", code: null } }] });
    expect(await waiting)
      .to.be.instanceOf(WorkflowFailedError)
      .and.include({ state: "failed", failedStep: "second", failedJobId: second!.id });
    expect((await store.getJob({ id: first!.id }))?.state).to.equal("running");
    await eventually(() => completions.watchedJobs === 0, { timeoutMs: 10_000, what: "every watch to end" });
  });

  it("watches a bounded number of a wide workflow's final steps, and finds one of the others dead at the next read of the workflow", async () => {
    const width = MAX_WATCHED_STEPS + 4;
    const workflow = await client.enqueueWorkflow("wide", { parts: Array.from({ length: width }, (_, n) => step(Square, { n })) });
    const parts = await store.claimBatch({ queue: Square.name, workerId: "w1", limit: width, leaseMs: 60_000 });
    expect(parts).to.have.length(width);
    const pollIntervalMs = 200;
    const waiting = client.waitFor(workflow, { pollIntervalMs }).catch((thrown: unknown) => thrown);
    await eventually(async () => (await registeredWaits()) === MAX_WATCHED_STEPS, { timeoutMs: 10_000, what: "the first final steps to be watched" });
    const ids = workflow.steps.parts.map((job) => job.id);
    const last = parts.find((job) => job.id === ids[width - 1])!;
    const { rows } = await sql<{ job_id: string }>`SELECT job_id::text FROM ${sql.id(test.schema, "job_waiters")}`.execute(test.db);
    expect(rows.map((row) => row.job_id)).to.not.include(last.id, "the last final step is not among the watched");

    const deadAt = Date.now();
    await store.markJobsDead({ workerId: "w1", jobs: [{ id: last.id, attempt: last.attempt, failure: { message: "Error: no ink", code: null } }] });
    expect(await waiting)
      .to.be.instanceOf(WorkflowFailedError)
      .and.include({ state: "failed", failedStep: "parts", failedJobId: last.id });
    expect(Date.now() - deadAt, "found at a read of the workflow, within a few poll intervals").to.be.below(10 * pollIntervalMs);
    await eventually(() => completions.watchedJobs === 0, { timeoutMs: 10_000, what: "every watch to end" });
  });

  it("rejects with a JobNotFoundError for an unknown id", async () => {
    const missing = await client.waitFor("987654321").catch((thrown: unknown) => thrown);
    expect(missing).to.be.instanceOf(JobNotFoundError).and.include({ jobId: "987654321" });
  });

  it("polls alone when the store has no completion hints", async () => {
    const pollingClient = new JobClient(test.store);
    const id = (await test.store.enqueue(buildNewJob(Square, { n: 8 }))).id;
    const waiting = pollingClient.waitFor(Square, id, { pollIntervalMs: 50 });
    await squareWorker(async (item) => ({ square: item.n * item.n })).start();
    expect(await waiting).to.deep.equal({ square: 64 });
  });
});
