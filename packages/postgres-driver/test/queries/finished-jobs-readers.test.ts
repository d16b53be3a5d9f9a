import { JobClient, JobFailedError, type JobState } from "@stint/core";
import { eventually, newJob } from "@stint/core/testing";
import { expect } from "chai";
import { sql } from "kysely";
import { PostgresJobBrowser, PostgresJobStore, type PostgresCompletionSource } from "../../src";
import { createTestSchema, type TestSchema } from "../../src/testing";
import { insertLegacyFinishedRow, whereIs, type FinishedState } from "../support/finished-rows";
import { testCompletions } from "../support/test-completions";

const QUEUE = "send-invoice";
const FINISHED: readonly FinishedState[] = ["succeeded", "dead", "cancelled"];
const permanent = { message: "PermanentError: invoice 812 does not exist", code: "STINT_PERMANENT" };

/** A finished job of the fixture: where its row is, and its state. */
interface Finished {
  readonly id: string;
  readonly state: FinishedState;
  readonly place: "finished_jobs" | "jobs";
}

describe("every reader finds a finished job, moved to finished_jobs or left in jobs by an older version", () => {
  let test: TestSchema;
  let browser: PostgresJobBrowser;
  /** A succeeded, a dead and a cancelled job finished by this version, then one of each inserted into `jobs` as before version 15. */
  let finished: Finished[];
  let queuedId: string;

  /** Claims the next job of `queue` as `workerId`. */
  async function claimNext(workerId: string, queue = QUEUE) {
    const [job] = await test.store.claimBatch({ queue, workerId, limit: 1, leaseMs: 60_000 });
    expect(job, `a job of ${queue} to claim`).to.not.equal(undefined);
    return job!;
  }

  before(async () => {
    test = await createTestSchema({ prefix: "stint_readers" });
    browser = new PostgresJobBrowser({ db: test.db, schema: test.schema });
    const [succeeded, dead, cancelled] = await test.store.enqueueMany([
      newJob(QUEUE, { invoiceId: 1 }),
      newJob(QUEUE, { invoiceId: 2 }),
      newJob(QUEUE, { invoiceId: 3 }),
    ]);
    const first = await claimNext("w1");
    expect(
      await test.store.completeJobs({ workerId: "w1", jobs: [{ id: first.id, attempt: first.attempt, resultJson: '{"sent":true}', durationMs: 12 }] }),
    ).to.deep.equal([succeeded!.id]);
    const second = await claimNext("w2");
    expect(
      await test.store.markJobsDead({ workerId: "w2", jobs: [{ id: second.id, attempt: second.attempt, failure: permanent, durationMs: 5 }] }),
    ).to.deep.equal([dead!.id]);
    expect(await test.store.cancelJob({ id: cancelled!.id })).to.equal(true);
    finished = [
      { id: succeeded!.id, state: "succeeded", place: "finished_jobs" },
      { id: dead!.id, state: "dead", place: "finished_jobs" },
      { id: cancelled!.id, state: "cancelled", place: "finished_jobs" },
    ];
    for (const state of FINISHED) finished.push({ id: await insertLegacyFinishedRow(test.db, test.schema, { queue: QUEUE, state }), state, place: "jobs" });
    // The legacy death's hook is pending, as markJobsDead of a version before 15 left it.
    const legacyDead = finished.find((job) => job.place === "jobs" && job.state === "dead")!;
    await sql`INSERT INTO ${sql.id(test.schema, "dead_hooks")} (job_id, attempt, queue, error_code, last_error)
              VALUES (${legacyDead.id}::bigint, 1, ${QUEUE}, 'STINT_PERMANENT', 'Error: legacy dead job')`.execute(test.db);
    queuedId = (await test.store.enqueue(newJob(QUEUE, { invoiceId: 4 }, { delayMs: 3_600_000 }))).id;
  });
  after(async () => {
    await test.drop();
  });

  it("starts from the rows where this version and an older one put them", async () => {
    for (const job of finished) expect(await whereIs(test.db, test.schema, job.id), `job ${job.id} (${job.state})`).to.equal(job.place);
    expect(await whereIs(test.db, test.schema, queuedId)).to.equal("jobs");
  });

  it("getJob reads each with its state, finish time and result or error", async () => {
    for (const job of finished) {
      const read = await test.store.getJob({ id: job.id });
      expect(read, `job ${job.id}`).to.include({ id: job.id, state: job.state, queue: QUEUE });
      expect(read!.finishedAt, `job ${job.id}`).to.be.instanceOf(Date);
      if (job.state === "succeeded") expect(read!.result).to.deep.equal(job.place === "jobs" ? { legacy: true } : { sent: true });
      if (job.state === "dead") expect(read!.lastError).to.match(job.place === "jobs" ? /legacy dead/ : /invoice 812 does not exist/);
    }
    expect(await test.store.getJob({ id: String(Number(queuedId) + 1_000) })).to.equal(undefined);
  });

  it("listJobs lists each once, newest first, by state and page by page", async () => {
    const all = [...finished.map((job) => job.id), queuedId].sort((a, b) => Number(b) - Number(a));
    expect((await test.store.listJobs({ queue: QUEUE, limit: 100 })).map((job) => job.id)).to.deep.equal(all);
    for (const state of FINISHED) {
      const listed = await test.store.listJobs({ queue: QUEUE, states: [state], limit: 100 });
      const expected = finished.filter((job) => job.state === state).map((job) => job.id);
      expect(listed.map((job) => job.id)).to.deep.equal(expected.sort((a, b) => Number(b) - Number(a)));
    }
    expect((await test.store.listJobs({ states: ["queued"], limit: 100 })).map((job) => job.id)).to.deep.equal([queuedId]);
    const paged: string[] = [];
    let beforeId: string | undefined;
    for (let page = 0; page < all.length + 1; page += 1) {
      const [job] = await test.store.listJobs({ queue: QUEUE, limit: 1, ...(beforeId === undefined ? {} : { beforeId }) });
      if (job === undefined) break;
      paged.push(job.id);
      beforeId = job.id;
    }
    expect(paged).to.deep.equal(all);
  });

  it("the browser pages, searches and counts them as the dashboard's list reads them", async () => {
    for (const state of FINISHED) {
      const ids = finished.filter((job) => job.state === state).map((job) => job.id);
      const plain = await browser.browseJobs({ states: [state], limit: 50, scanLimit: 1_000 });
      expect(plain.jobs.map((job) => job.id)).to.have.members(ids);
      expect(plain.jobs.every((job) => job.state === state && job.finishedAt instanceof Date)).to.equal(true);
      const ofQueue = await browser.browseJobs({ queue: QUEUE, states: [state], limit: 50, scanLimit: 1_000 });
      expect(ofQueue.searched, "the queue is read from an index, not searched").to.equal(null);
      expect(ofQueue.jobs.map((job) => job.id)).to.have.members(ids);
      const searched = await browser.browseJobs({ queue: QUEUE, states: [state], errorText: "%", limit: 50, scanLimit: 1_000 });
      expect(searched.searched).to.deep.include({ scanned: 2, complete: true });
      expect(await browser.countJobsUpTo({ states: [state], cap: 100 })).to.equal(2);
    }
    const errors = await browser.browseJobs({ states: ["dead"], errorText: "legacy dead", limit: 50, scanLimit: 1_000 });
    expect(errors.jobs.map((job) => job.id)).to.deep.equal(finished.filter((job) => job.state === "dead" && job.place === "jobs").map((job) => job.id));
    expect(errors.jobs[0]!.errorHead).to.equal("Error: legacy dead job");
    const everything = await browser.browseJobs({ limit: 3, scanLimit: 1_000 });
    expect(everything.jobs.map((job) => job.id)).to.deep.equal([queuedId, finished[5]!.id, finished[4]!.id]);
    expect(await browser.countJobsUpTo({ cap: 100 })).to.equal(7);
    expect(await browser.countJobsUpTo({ cap: 3 })).to.equal(4);
  });

  it("countByQueue counts each in its state, and the succeeded ones as recently completed", async () => {
    const [counts] = await test.store.countByQueue({ queues: [QUEUE], completedSinceMs: 3_600_000 });
    expect(counts!.counts).to.deep.equal({ blocked: 0, queued: 1, running: 0, failed: 0, succeeded: 2, dead: 2, cancelled: 2 });
    expect(counts!.completedSince).to.equal(2);
  });

  it("the gauges count both dead jobs, and the recent throughput both succeeded ones", async () => {
    const [gauges] = await test.store.readQueueGauges({ queues: [QUEUE] });
    expect(gauges).to.include({ queue: QUEUE, queued: 1, failed: 0, running: 0, dead: 2 });
    expect(await browser.readQueueGauges()).to.deep.equal([gauges]);
    const hour = await browser.readRecentThroughput({ windowMs: 3_600_000, buckets: 12, scanLimit: 1_000 });
    expect(hour).to.include({ scanned: 2, coversWindow: true });
    expect(hour.queues).to.have.length(1);
    expect(hour.queues[0]).to.include({ queue: QUEUE, succeeded: 2 });
    expect(hour.queues[0]!.buckets.at(-1)).to.equal(2);
  });

  it("listAttempts gives each its attempts: the failed ones from the history, the successful one from the row", async () => {
    for (const job of finished) {
      const attempts = await test.store.listAttempts({ jobId: job.id });
      if (job.state === "succeeded") {
        expect(
          attempts.map((attempt) => [attempt.attempt, attempt.outcome, attempt.workerId]),
          `job ${job.id}`,
        ).to.deep.equal([[1, "succeeded", job.place === "jobs" ? "legacy-worker" : "w1"]]);
      } else if (job.place === "finished_jobs" && job.state === "dead") {
        expect(
          attempts.map((attempt) => [attempt.attempt, attempt.outcome, attempt.workerId]),
          `job ${job.id}`,
        ).to.deep.equal([[1, "dead", "w2"]]);
        expect(attempts[0]!.error?.message).to.match(/invoice 812 does not exist/);
      } else {
        // Cancelled before it ran, or finished before attempt history was written for it: no attempt to show.
        expect(attempts, `job ${job.id}`).to.deep.equal([]);
      }
    }
  });

  it("claimDeadHooks hands each death over with its dead job", async () => {
    const claims = await test.store.claimDeadHooks({ queue: QUEUE, workerId: "hooks", limit: 10, leaseMs: 60_000 });
    const dead = finished.filter((job) => job.state === "dead");
    expect(claims.map((claim) => claim.jobId)).to.have.members(dead.map((job) => job.id));
    for (const claim of claims) expect(claim.job, `the job of death ${claim.jobId}`).to.include({ id: claim.jobId, state: "dead", queue: QUEUE });
  });

  describe("waitFor", () => {
    let completions: PostgresCompletionSource;
    let client: JobClient;

    beforeEach(() => {
      completions = testCompletions(test).source;
      client = new JobClient(new PostgresJobStore({ db: test.db, schema: test.schema, completions }));
    });
    afterEach(async () => {
      await completions.close();
    });

    it("answers at once for a job that finished before the wait began", async () => {
      for (const job of finished) {
        const waited = client.waitFor(job.id, { timeoutMs: 5_000, pollIntervalMs: 60_000 });
        if (job.state === "succeeded") {
          expect(await waited, `job ${job.id}`).to.deep.equal(job.place === "jobs" ? { legacy: true } : { sent: true });
        } else {
          const error = await waited.catch((thrown: unknown) => thrown);
          expect(error, `job ${job.id}`).to.be.instanceOf(JobFailedError).and.include({ jobId: job.id, state: job.state });
        }
      }
    });

    it("answers when the job it waits for finishes and moves to finished_jobs", async () => {
      const outcomes: [string, JobState][] = [];
      for (const how of FINISHED) {
        const { id } = await test.store.enqueue(newJob("wait-target", { how }));
        const waited = client.waitFor(id, { timeoutMs: 10_000, pollIntervalMs: 60_000 }).then(
          () => "succeeded" as const,
          (thrown: unknown) => (thrown instanceof JobFailedError ? thrown.state : thrown),
        );
        await eventually(() => completions.watchedJobs === 1, { timeoutMs: 10_000, what: `the wait for job ${id} to watch it` });
        if (how === "cancelled") {
          expect(await test.store.cancelJob({ id })).to.equal(true);
        } else {
          const job = await claimNext("w3", "wait-target");
          expect(job.id).to.equal(id);
          if (how === "succeeded") await test.store.completeJobs({ workerId: "w3", jobs: [{ id, attempt: job.attempt, resultJson: null, durationMs: 1 }] });
          else await test.store.markJobsDead({ workerId: "w3", jobs: [{ id, attempt: job.attempt, failure: permanent }] });
        }
        outcomes.push([id, (await waited) as JobState]);
        expect(await whereIs(test.db, test.schema, id)).to.equal("finished_jobs");
        await eventually(() => completions.watchedJobs === 0, { timeoutMs: 10_000, what: `the wait for job ${id} to end` });
      }
      expect(outcomes.map(([, state]) => state)).to.deep.equal(FINISHED);
    });
  });
});
