import { expect } from "chai";
import { defineJob, ErrorCode, permanent, type JobRecord } from "@stint/core";
import { deadLetterLinks } from "@stint/core/internal";
import { buildNewJob } from "@stint/core/driver";
import { sql } from "kysely";
import { ScriptedWorker, deferred, schemaPerTest, type Task } from "./scripted-worker";

/** Refunds die on their third attempt at the latest; their copies go to `refund-dead`. */
const Refund = defineJob<Task>("task", { maxAttempts: 3, deadLetterQueue: "refund-dead" });
/** The dead-letter queue's own kind, which names the first queue back: a loop that must not happen. */
const RefundDead = defineJob<Task>("refund-dead", { maxAttempts: 1, deadLetterQueue: "task" });

describe("dead-letter queues: a job that dies is copied to its kind's dead-letter queue (PostgreSQL)", function () {
  this.timeout(30_000);
  const test = schemaPerTest();
  const store = () => test.schema().store;

  async function jobsOf(queue: string): Promise<readonly JobRecord[]> {
    return store().listJobs({ queue, limit: 100 });
  }

  /** The one copy on the dead-letter queue, checked against the dead job `id`. */
  async function theCopyOf(id: string): Promise<JobRecord> {
    const copies = await jobsOf("refund-dead");
    expect(copies, "one copy").to.have.length(1);
    const [copy] = copies;
    const dead = await store().getJob({ id });
    expect(dead!.state).to.equal("dead");
    expect(deadLetterLinks(dead!.meta)).to.deep.equal({ queue: "refund-dead", copyId: copy!.id, origin: null });
    expect(deadLetterLinks(copy!.meta).origin).to.include({ jobId: id, queue: "task", attempts: dead!.attempts, errorCode: dead!.errorCode });
    expect(copy!.state).to.equal("queued");
    return copy!;
  }

  it("copies a job whose attempts ran out, with its payload and last error", async () => {
    const { id } = await store().enqueue(buildNewJob(Refund, { n: 7 }));
    const summary = await new ScriptedWorker(store(), {
      job: Refund,
      process: async (_item, ctx) => {
        throw new Error(`gateway down on attempt ${ctx.job.attempt}`);
      },
    }).start();
    expect(summary).to.include({ retried: 2, dead: 1 });
    const copy = await theCopyOf(id);
    expect(copy.payload).to.deep.equal({ n: 7 });
    expect(deadLetterLinks(copy.meta).origin).to.include({ attempts: 3, error: "Error: gateway down on attempt 3" });
  });

  it("copies a job that failed with a permanent error on its first attempt", async () => {
    const { id } = await store().enqueue(buildNewJob(Refund, { n: 1 }));
    await new ScriptedWorker(store(), {
      job: Refund,
      process: async () => {
        throw permanent(new Error("refund 1 was already paid back"));
      },
    }).start();
    const copy = await theCopyOf(id);
    expect(deadLetterLinks(copy.meta).origin).to.include({ attempts: 1, errorCode: ErrorCode.Permanent });
  });

  it("copies a job whose payload does not parse, payload as stored", async () => {
    const { id } = await store().enqueue(buildNewJob(Refund, { n: "seven" } as never));
    await new ScriptedWorker(store(), { job: Refund, process: async () => undefined }).start();
    const copy = await theCopyOf(id);
    expect(copy.payload).to.deep.equal({ n: "seven" });
    expect(deadLetterLinks(copy.meta).origin).to.include({ errorCode: ErrorCode.Parse });
  });

  it("copies nothing when an operator cancels a running job: a cancel is not a death", async () => {
    const { id } = await store().enqueue(buildNewJob(Refund, { n: 1 }));
    const started = deferred();
    const run = new ScriptedWorker(
      store(),
      {
        job: Refund,
        process: async (_item, ctx) => {
          started.resolve();
          await new Promise<void>((resolve) => ctx.signal.addEventListener("abort", () => resolve(), { once: true }));
        },
      },
      { leaseMs: 2_000 },
    ).start();
    await started.promise;
    expect(await store().cancelJob({ id })).to.equal(true);
    await run;
    expect((await store().getJob({ id }))!.state).to.equal("cancelled");
    expect(await jobsOf("refund-dead")).to.deep.equal([]);
  });

  it("writes the death and the copy together: when the copy cannot be written, the job is not dead either", async () => {
    const { db, schema } = test.schema();
    await sql`CREATE FUNCTION ${sql.id(schema, "refuse_copies")}() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN RAISE EXCEPTION 'no room on %', NEW.queue; END $$`.execute(db);
    await sql`CREATE TRIGGER refuse_copies BEFORE INSERT ON ${sql.id(schema, "jobs")}
  FOR EACH ROW WHEN (NEW.queue = 'refund-dead') EXECUTE FUNCTION ${sql.id(schema, "refuse_copies")}()`.execute(db);
    const { id } = await store().enqueue(buildNewJob(Refund, { n: 1 }));
    const [job] = await store().claimBatch({ queue: "task", workerId: "w", limit: 1, leaseMs: 60_000 });
    const death = { workerId: "w", jobs: [{ id, attempt: job!.attempt, failure: { message: "Error: no", code: null } }] };

    let refused: unknown;
    await store()
      .markJobsDead(death)
      .catch((error: unknown) => (refused = error));
    expect(String(refused)).to.contain("no room on refund-dead");
    expect((await store().getJob({ id }))!.state, "the death was rolled back with the copy").to.equal("running");
    expect((await db.selectFrom(`${schema}.finished_jobs`).select("id").execute()).length).to.equal(0);
    expect(await jobsOf("refund-dead")).to.deep.equal([]);

    await sql`DROP TRIGGER refuse_copies ON ${sql.id(schema, "jobs")}`.execute(db);
    expect(await store().markJobsDead(death)).to.deep.equal([id]);
    await theCopyOf(id);
  });

  it("does not loop when the dead-letter queue's kind names the first queue: a copy that dies stays dead", async () => {
    const { id } = await store().enqueue(buildNewJob(Refund, { n: 1 }));
    const failing = async (): Promise<never> => {
      throw permanent(new Error("still broken"));
    };
    await new ScriptedWorker(store(), { job: Refund, process: failing }).start();
    const copy = await theCopyOf(id);
    await new ScriptedWorker(store(), { job: RefundDead, process: failing }).start();
    await new ScriptedWorker(store(), { job: Refund, process: failing }).start();

    expect((await jobsOf("task")).map((job) => [job.id, job.state])).to.deep.equal([[id, "dead"]]);
    expect((await jobsOf("refund-dead")).map((job) => [job.id, job.state])).to.deep.equal([[copy.id, "dead"]]);
    expect(deadLetterLinks((await store().getJob({ id: copy.id }))!.meta).copyId, "a copy gets no copy").to.equal(null);
  });
});
