import { expect } from "chai";
import { sql } from "kysely";
import { ErrorCode, defineJob, errorCodeOf, retryAfter, snooze, type JobRecord } from "@stint/core";
import { buildNewJob } from "@stint/core/driver";
import { createTestSchema, type TestSchema } from "../../src/testing";
import { ScriptedWorker, TaskJob, deferred, type Task } from "./scripted-worker";

describe("a worker's lifecycle against PostgreSQL", () => {
  let t: TestSchema;

  beforeEach(async () => {
    t = await createTestSchema();
  });
  afterEach(async () => {
    await t.drop();
  });

  async function enqueue(n: number, options: Parameters<typeof buildNewJob>[2] = {}, job = TaskJob): Promise<string> {
    return (await t.store.enqueue(buildNewJob(job, { n }, options))).id;
  }
  async function row(id: string): Promise<JobRecord> {
    const record = await t.store.getJob({ id });
    if (!record) throw new Error(`job ${id} is missing`);
    return record;
  }

  it("succeeds on the second attempt after a transient failure", async () => {
    const id = await enqueue(1);
    let calls = 0;
    const summary = await new ScriptedWorker(t.store, {
      process: async () => {
        calls += 1;
        if (calls === 1) throw Object.assign(new Error("upstream answered 503"), { status: 503 });
        return { ok: true };
      },
    }).start();

    expect(summary).to.include({ claimed: 2, succeeded: 1, retried: 1, dead: 0, leaseLost: 0, stoppedBecause: "drained" });
    const job = await row(id);
    expect(job).to.include({ state: "succeeded", attempts: 2 });
    expect(job.result).to.deep.equal({ ok: true });
    expect(job.lastError).to.contain("upstream answered 503");
    expect(job.finishedAt).to.be.instanceOf(Date);
    expect(job.durationMs).to.be.a("number");
    expect(Object.isFrozen(summary)).to.equal(true);
  });

  it("gives up after maxAttempts and keeps the last error", async () => {
    const id = await enqueue(1);
    const summary = await new ScriptedWorker(t.store, {
      process: async () => {
        throw new Error("the mail server is down");
      },
    }).start();

    expect(summary).to.include({ claimed: 3, retried: 2, dead: 1, succeeded: 0 });
    const job = await row(id);
    expect(job).to.include({ state: "dead", attempts: 3, maxAttempts: 3 });
    expect(job.lastError).to.match(/^Error: the mail server is down/);
    expect(job.errorCode).to.equal(ErrorCode.Unknown);
  });

  it("sends a malformed payload to dead after one attempt without calling the handler", async () => {
    const { id } = await t.store.enqueue({ ...buildNewJob(TaskJob, { n: 1 }), payloadJson: JSON.stringify({ n: "seven" }) });
    let calls = 0;
    const summary = await new ScriptedWorker(t.store, {
      process: async () => {
        calls += 1;
      },
    }).start();

    expect(calls).to.equal(0);
    expect(summary).to.include({ claimed: 1, dead: 1, retried: 0 });
    const job = await row(id);
    expect(job).to.include({ state: "dead", attempts: 1, errorCode: ErrorCode.Parse });
    expect(job.lastError).to.contain('n must be a number, got "seven"');
  });

  it("treats a permanent error as dead at once", async () => {
    const id = await enqueue(1);
    const summary = await new ScriptedWorker(t.store, {
      process: async () => {
        throw Object.assign(new Error("customer 9 not found"), { status: 404 });
      },
    }).start();
    expect(summary).to.include({ claimed: 1, dead: 1 });
    expect(await row(id)).to.include({ state: "dead", attempts: 1 });
  });

  it("aborts an attempt at its timeout and retries it", async () => {
    const id = await enqueue(1, { timeoutMs: 100 });
    const reasons: unknown[] = [];
    const summary = await new ScriptedWorker(t.store, {
      process: async (_item, ctx) => {
        if (ctx.job.attempt > 1) return "fast enough";
        await new Promise<void>((resolve) => ctx.signal.addEventListener("abort", () => resolve(), { once: true }));
        reasons.push(ctx.signal.reason);
        throw ctx.signal.reason;
      },
    }).start();

    expect(reasons.map(errorCodeOf)).to.deep.equal([ErrorCode.Timeout]);
    expect(summary).to.include({ claimed: 2, retried: 1, succeeded: 1 });
    const job = await row(id);
    expect(job).to.include({ state: "succeeded", attempts: 2, errorCode: ErrorCode.Timeout });
    expect(job.lastError).to.contain("job timed out after 100 ms");
  });

  it("records a timeout even when the handler ignores its signal", async () => {
    const id = await enqueue(1, { timeoutMs: 50, maxAttempts: 1 });
    const never = deferred();
    const summary = await new ScriptedWorker(t.store, { process: () => never.promise }).start();
    expect(summary).to.include({ claimed: 1, dead: 1 });
    expect(await row(id)).to.include({ state: "dead", errorCode: ErrorCode.Timeout });
    never.resolve();
  });

  it("honours a handler's retryAfter delay on the database clock", async () => {
    const id = await enqueue(1);
    const summary = await new ScriptedWorker(t.store, {
      process: async () => {
        throw retryAfter(60_000, new Error("rate limited"));
      },
    }).start();
    expect(summary).to.include({ claimed: 1, retried: 1 });
    const { rows } = await sql<{ wait_ms: number }>`
      select extract(epoch from (run_at - now())) * 1000 as wait_ms from ${sql.id(t.schema, "jobs")} where id = ${id}`.execute(t.db);
    expect(Number(rows[0]?.wait_ms)).to.be.within(50_000, 60_000);
    expect(await row(id)).to.include({ state: "failed", attempts: 1 });
  });

  it("snoozes without spending an attempt", async () => {
    const id = await enqueue(1, { maxAttempts: 1 });
    const summary = await new ScriptedWorker(t.store, {
      process: async (_item, ctx) => {
        if (ctx.job.attempt === 1) throw snooze(0);
        return "woke up";
      },
    }).start();
    expect(summary).to.include({ claimed: 2, snoozed: 1, succeeded: 1, dead: 0 });
    expect(await row(id)).to.include({ state: "succeeded", attempts: 2, maxAttempts: 2 });
  });

  it("lets handleFailure overrides decide", async () => {
    const id = await enqueue(1, { maxAttempts: 10 });
    const summary = await new ScriptedWorker(t.store, {
      process: async () => {
        throw new Error("flaky");
      },
      handleFailure: () => ({ action: "dead" }),
    }).start();
    expect(summary).to.include({ claimed: 1, dead: 1 });
    expect(await row(id)).to.include({ state: "dead", attempts: 1 });
  });

  it("never works on more jobs than its concurrency and claims in batches", async () => {
    for (let n = 0; n < 40; n += 1) await enqueue(n);
    let running = 0;
    let peak = 0;
    const summary = await new ScriptedWorker(
      t.store,
      {
        process: async () => {
          running += 1;
          peak = Math.max(peak, running);
          await new Promise((resolve) => setTimeout(resolve, 5));
          running -= 1;
        },
      },
      { concurrency: 4 },
    ).start();
    expect(summary).to.include({ claimed: 40, succeeded: 40 });
    expect(peak).to.equal(4);
  });

  it("chains a job through its context", async () => {
    const Follow = defineJob<Task>("follow-up");
    await enqueue(1);
    await new ScriptedWorker(t.store, {
      process: async (item, ctx) => {
        await ctx.enqueue(Follow, { n: item.n + 1 });
      },
    }).start();
    const chained: Task[] = [];
    await new ScriptedWorker(t.store, {
      job: Follow,
      process: async (item) => {
        chained.push(item);
      },
    }).start();
    expect(chained).to.deep.equal([{ n: 2 }]);
  });

  it("stops after maxJobs claims", async () => {
    for (let n = 0; n < 10; n += 1) await enqueue(n);
    const summary = await new ScriptedWorker(t.store, { process: async () => undefined }, { concurrency: 3 }).start({ maxJobs: 4 });
    expect(summary).to.include({ claimed: 4, succeeded: 4, stoppedBecause: "max-jobs" });
  });

  it("leaves jobs of other queues untouched", async () => {
    const other = await t.store.enqueue(buildNewJob(defineJob<Task>("someone-else"), { n: 1 }));
    await enqueue(1);
    await new ScriptedWorker(t.store, { process: async () => undefined }).start();
    expect(await row(other.id)).to.include({ state: "queued", attempts: 0 });
  });
});
