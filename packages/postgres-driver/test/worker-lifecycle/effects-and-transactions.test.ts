import { expect } from "chai";
import { sql, type Transaction } from "kysely";
import { RetryableError, type JobRecord } from "@stint/core";
import { buildNewJob } from "@stint/core/driver";
import { createTestSchema, type TestSchema } from "../../src/testing";
import { ScriptedWorker, TaskJob, deferred } from "./scripted-worker";

describe("ctx.once and ctx.transaction through a real worker", () => {
  let t: TestSchema;

  beforeEach(async () => {
    t = await createTestSchema();
    await sql`CREATE TABLE ${sql.id(t.schema, "bookings")} (n integer NOT NULL, job_id bigint NOT NULL)`.execute(t.db);
  });
  afterEach(async () => {
    await t.drop();
  });

  async function enqueue(n: number, maxAttempts = 3): Promise<string> {
    return (await t.store.enqueue(buildNewJob(TaskJob, { n }, { maxAttempts }))).id;
  }
  async function row(id: string): Promise<JobRecord> {
    const record = await t.store.getJob({ id });
    if (!record) throw new Error(`job ${id} is missing`);
    return record;
  }
  /** Books `n` for `jobId` through a transaction handed out by stint. */
  async function book(trx: Transaction<any>, n: number, jobId: string): Promise<void> {
    await sql`INSERT INTO ${sql.id(t.schema, "bookings")} (n, job_id) VALUES (${n}, ${jobId}::bigint)`.execute(trx);
  }
  async function bookings(): Promise<number> {
    const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM ${sql.id(t.schema, "bookings")}`.execute(t.db);
    return rows[0]?.n ?? 0;
  }

  describe("ctx.once", () => {
    it("runs an effect once across the retries of a job and returns the recorded result", async () => {
      const id = await enqueue(7);
      let effects = 0;
      const summary = await new ScriptedWorker(t.store, {
        process: async (item, ctx) => {
          const receipt = await ctx.once(`booking:${item.n}`, async (trx: Transaction<any>) => {
            effects += 1;
            await book(trx, item.n, ctx.job.id);
            return { receipt: `r-${item.n}` };
          });
          if (ctx.job.attempt === 1) throw new RetryableError("the process lost its connection after the effect");
          return receipt;
        },
      }).start();

      expect(summary).to.include({ claimed: 2, retried: 1, succeeded: 1 });
      expect(effects).to.equal(1);
      expect(await bookings()).to.equal(1);
      expect((await row(id)).result).to.deep.equal({ receipt: "r-7" });
    });

    it("runs an effect once for two jobs that share its key", async () => {
      const ids = [await enqueue(3), await enqueue(3)];
      let effects = 0;
      const summary = await new ScriptedWorker(
        t.store,
        {
          process: (item, ctx) =>
            ctx.once(`booking:${item.n}`, async (trx: Transaction<any>) => {
              effects += 1;
              await book(trx, item.n, ctx.job.id);
              await new Promise((resolve) => setTimeout(resolve, 50));
              return { bookedBy: ctx.job.id };
            }),
        },
        { concurrency: 2 },
      ).start();

      expect(summary).to.include({ succeeded: 2 });
      expect(effects).to.equal(1);
      expect(await bookings()).to.equal(1);
      const results = await Promise.all(ids.map(async (id) => (await row(id)).result));
      expect(results[0]).to.deep.equal(results[1]);
    });

    it("lets the retry run an effect whose first run threw, with none of its writes kept", async () => {
      await enqueue(5);
      let effects = 0;
      const summary = await new ScriptedWorker(t.store, {
        process: (item, ctx) =>
          ctx.once(`booking:${item.n}`, async (trx: Transaction<any>) => {
            effects += 1;
            await book(trx, item.n, ctx.job.id);
            if (effects === 1) throw Object.assign(new Error("provider answered 503"), { status: 503 });
            return "booked";
          }),
      }).start();

      expect(summary).to.include({ retried: 1, succeeded: 1 });
      expect(effects).to.equal(2);
      expect(await bookings()).to.equal(1);
    });
  });

  describe("ctx.transaction", () => {
    it("commits the handler's writes and the job's success together", async () => {
      const id = await enqueue(1);
      const summary = await new ScriptedWorker(t.store, {
        process: (item, ctx) =>
          ctx.transaction(async (trx: Transaction<any>) => {
            await book(trx, item.n, ctx.job.id);
            return { booked: item.n };
          }),
      }).start();

      expect(summary).to.include({ claimed: 1, succeeded: 1, leaseLost: 0 });
      expect(await bookings()).to.equal(1);
      const job = await row(id);
      expect(job).to.include({ state: "succeeded", attempts: 1, lockedUntil: null });
      expect(job.result).to.deep.equal({ booked: 1 });
      expect(job.durationMs).to.be.a("number");
    });

    it("rolls the writes back when the lease was taken over before the commit", async () => {
      const id = await enqueue(1);
      const started = deferred();
      const stolen = deferred();
      const worker = new ScriptedWorker(
        t.store,
        {
          process: async (item, ctx) => {
            started.resolve();
            await stolen.promise;
            return ctx.transaction(async (trx: Transaction<any>) => {
              await book(trx, item.n, ctx.job.id);
              return "too late";
            });
          },
        },
        { leaseMs: 60_000 },
      );
      const run = worker.start();
      await started.promise;
      await sql`UPDATE ${sql.id(t.schema, "jobs")} SET locked_until = now() - interval '1 second' WHERE id = ${id}`.execute(t.db);
      const [thief] = await t.store.claimBatch({ queue: TaskJob.name, workerId: "thief", limit: 1, leaseMs: 60_000 });
      expect(thief?.id).to.equal(id);
      stolen.resolve();
      const summary = await run;

      expect(summary).to.include({ claimed: 1, succeeded: 0, leaseLost: 1, retried: 0, dead: 0 });
      expect(await bookings(), "the writes of the attempt that lost its lease").to.equal(0);
      expect(await row(id)).to.include({ state: "running", lockedBy: "thief", attempts: 2, result: null });
    });

    it("keeps the job succeeded when the handler throws after its transaction", async () => {
      const id = await enqueue(1);
      const summary = await new ScriptedWorker(t.store, {
        process: async (item, ctx) => {
          await ctx.transaction(async (trx: Transaction<any>) => {
            await book(trx, item.n, ctx.job.id);
            return { booked: item.n };
          });
          throw new Error("a cleanup step failed after the commit");
        },
      }).start();

      expect(summary).to.include({ claimed: 1, succeeded: 1, retried: 0, dead: 0 });
      expect(await bookings()).to.equal(1);
      const job = await row(id);
      expect(job).to.include({ state: "succeeded", attempts: 1, lastError: null });
      expect(job.result).to.deep.equal({ booked: 1 });
    });
  });
});
