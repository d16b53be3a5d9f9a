import { expect } from "chai";
import { sql } from "kysely";
import { ErrorCode, errorCodeOf, type JobRecord } from "@stint/core";
import { resolveWorkerOptions } from "@stint/core/internal";
import { buildNewJob } from "@stint/core/driver";
import { PostgresWakeupSource } from "../../src";
import { createTestSchema, type TestSchema } from "../../src/testing";
import { eventually } from "@stint/core/testing";
import { ScriptedWorker, TaskJob, deferred } from "./scripted-worker";

describe("leases, heartbeats and shutdown", () => {
  let t: TestSchema;

  beforeEach(async () => {
    t = await createTestSchema();
  });
  afterEach(async () => {
    await t.drop();
  });

  async function enqueue(n: number): Promise<string> {
    return (await t.store.enqueue(buildNewJob(TaskJob, { n }))).id;
  }
  async function row(id: string): Promise<JobRecord> {
    const record = await t.store.getJob({ id });
    if (!record) throw new Error(`job ${id} is missing`);
    return record;
  }
  /** Makes the job's lease look expired and lets worker "thief" claim it, as after a stall. */
  async function stealJob(id: string): Promise<void> {
    await sql`update ${sql.id(t.schema, "jobs")} set locked_until = now() - interval '1 second' where id = ${id}`.execute(t.db);
    const stolen = await t.store.claimBatch({ queue: TaskJob.name, workerId: "thief", limit: 1, leaseMs: 60_000 });
    expect(stolen.map((job) => job.id)).to.deep.equal([id]);
  }

  it("discards the outcome of an attempt whose lease was taken over", async () => {
    const id = await enqueue(1);
    const started = deferred();
    const release = deferred();
    const worker = new ScriptedWorker(
      t.store,
      {
        process: async () => {
          started.resolve();
          await release.promise;
          return "too late";
        },
      },
      { leaseMs: 60_000 },
    );
    const run = worker.start();
    await started.promise;
    await stealJob(id);
    release.resolve();
    const summary = await run;

    expect(summary).to.include({ claimed: 1, succeeded: 0, leaseLost: 1 });
    expect(await row(id)).to.include({ state: "running", lockedBy: "thief", attempts: 2 });
  });

  it("aborts the handler when a heartbeat finds the lease gone", async () => {
    const id = await enqueue(1);
    const started = deferred();
    let abortReason: unknown;
    const worker = new ScriptedWorker(
      t.store,
      {
        process: async (_item, ctx) => {
          started.resolve();
          await new Promise<void>((resolve) => ctx.signal.addEventListener("abort", () => resolve(), { once: true }));
          abortReason = ctx.signal.reason;
          throw ctx.signal.reason;
        },
      },
      { leaseMs: 600 },
    );
    const run = worker.start();
    await started.promise;
    await stealJob(id);
    const summary = await run;

    expect(errorCodeOf(abortReason)).to.equal(ErrorCode.LeaseLost);
    expect(summary).to.include({ leaseLost: 1, retried: 0, dead: 0, succeeded: 0 });
    expect(await row(id)).to.include({ state: "running", lockedBy: "thief" });
  });

  it("stops a handler at its local deadline when heartbeats hang, and runs the next attempt only after it stopped", async () => {
    const id = await enqueue(1);
    const leaseMs = 600;
    const margin = resolveWorkerOptions({ leaseMs }).leaseMarginMs;
    // Heartbeats that never answer, as on a connection the network silently stopped carrying.
    const hangingHeartbeats = new Proxy(t.store, {
      get: (store, name) => {
        if (name === "extendLeases") return () => new Promise(() => undefined);
        const value = Reflect.get(store, name) as unknown;
        return typeof value === "function" ? (value as (...args: unknown[]) => unknown).bind(store) : value;
      },
    });
    const runs: { attempt: number; started: number; stopped: number }[] = [];
    const worker = new ScriptedWorker(
      hangingHeartbeats,
      {
        process: async (_item, ctx) => {
          const started = Date.now();
          if (ctx.job.attempt === 1) {
            await new Promise<void>((resolve) => ctx.signal.addEventListener("abort", () => resolve(), { once: true }));
            runs.push({ attempt: 1, started, stopped: Date.now() });
            throw ctx.signal.reason;
          }
          runs.push({ attempt: ctx.job.attempt, started, stopped: Date.now() });
        },
      },
      { leaseMs },
    );
    const firstClaimSent = Date.now();
    const summary = await worker.start();

    expect(summary).to.include({ claimed: 2, succeeded: 1, leaseLost: 1, writeFailed: 0 });
    expect(runs.map((run) => run.attempt)).to.deep.equal([1, 2]);
    expect(runs[0]!.stopped).to.be.at.most(firstClaimSent + leaseMs - margin + 100);
    expect(runs[1]!.started).to.be.at.least(runs[0]!.stopped);
    expect(await row(id)).to.include({ state: "succeeded", attempts: 2 });
  });

  it("keeps a job past leaseMs with heartbeats so no one else can claim it", async () => {
    const id = await enqueue(1);
    const leaseMs = 300;
    let thiefClaims = 0;
    const worker = new ScriptedWorker(
      t.store,
      {
        process: async () => {
          const until = Date.now() + leaseMs * 4;
          while (Date.now() < until) {
            thiefClaims += (await t.store.claimBatch({ queue: TaskJob.name, workerId: "thief", limit: 1, leaseMs })).length;
            await new Promise((resolve) => setTimeout(resolve, 25));
          }
        },
      },
      { leaseMs },
    );
    const summary = await worker.start();

    expect(thiefClaims).to.equal(0);
    expect(summary).to.include({ claimed: 1, succeeded: 1, leaseLost: 0 });
    expect(await row(id)).to.include({ state: "succeeded", attempts: 1 });
  });

  it("on shutdown lets in-flight jobs finish within the deadline", async () => {
    const id = await enqueue(1);
    const started = deferred();
    const controller = new AbortController();
    const worker = new ScriptedWorker(
      t.store,
      {
        process: async () => {
          started.resolve();
          await new Promise((resolve) => setTimeout(resolve, 100));
          return "finished in time";
        },
      },
      { shutdownTimeoutMs: 5_000 },
    );
    const run = worker.start({ signal: controller.signal });
    await started.promise;
    controller.abort();
    const summary = await run;
    expect(summary).to.include({ succeeded: 1, released: 0, stoppedBecause: "signal" });
    expect(await row(id)).to.include({ state: "succeeded" });
  });

  it("on shutdown gives back jobs still running at the deadline without spending their attempt", async () => {
    const ids = [await enqueue(1), await enqueue(2)];
    let startedCount = 0;
    const bothStarted = deferred();
    const controller = new AbortController();
    const reasons: unknown[] = [];
    const worker = new ScriptedWorker(
      t.store,
      {
        process: async (_item, ctx) => {
          startedCount += 1;
          if (startedCount === 2) bothStarted.resolve();
          await new Promise<void>((resolve) => ctx.signal.addEventListener("abort", () => resolve(), { once: true }));
          reasons.push(ctx.signal.reason);
        },
      },
      { concurrency: 2, shutdownTimeoutMs: 50 },
    );
    const run = worker.start({ signal: controller.signal });
    await bothStarted.promise;
    controller.abort();
    const summary = await run;

    expect(summary).to.include({ claimed: 2, released: 2, stoppedBecause: "signal" });
    expect(reasons.map(errorCodeOf)).to.deep.equal([ErrorCode.Shutdown, ErrorCode.Shutdown]);
    for (const id of ids) {
      const job = await row(id);
      expect(job.state).to.equal("queued");
      expect(job.maxAttempts - job.attempts).to.equal(3, "the released attempt is given back");
    }
    const { rows } = await sql<{ n: number }>`
      select count(*)::int as n from ${sql.id(t.schema, "jobs")} where state = 'running' and locked_by = ${worker.workerId}`.execute(t.db);
    expect(rows[0]?.n).to.equal(0);
  });

  it("gives back, unspent, the jobs of a claim that was still in flight when the stop came", async () => {
    const ids = [await enqueue(1), await enqueue(2)];
    const claimedOnServer = deferred();
    const answer = deferred();
    // The claim statement commits on the server; its answer reaches the worker only after the stop.
    const store = new Proxy(t.store, {
      get(target, property) {
        if (property === "claimBatch") {
          return async (params: Parameters<typeof target.claimBatch>[0]) => {
            const jobs = await target.claimBatch(params);
            claimedOnServer.resolve();
            await answer.promise;
            return jobs;
          };
        }
        const value: unknown = Reflect.get(target, property, target);
        return typeof value === "function" ? (value as (...args: unknown[]) => unknown).bind(target) : value;
      },
    });
    let handlerRuns = 0;
    const controller = new AbortController();
    const worker = new ScriptedWorker(store, { process: async () => (handlerRuns += 1) }, { concurrency: 1, prefetch: 1 });
    const run = worker.start({ signal: controller.signal });
    await claimedOnServer.promise;
    controller.abort();
    answer.resolve();
    const summary = await run;

    for (const id of ids) {
      expect(await row(id)).to.include({ state: "queued", attempts: 1, maxAttempts: 4, lockedUntil: null });
    }
    expect(handlerRuns).to.equal(0);
    expect(summary).to.include({ claimed: 2, released: 2, stoppedBecause: "signal" });
  });

  describe("when its database connection fails before a claim is known to be on disk", () => {
    /**
     * Runs a loop-mode worker whose one job waits on its signal, terminates
     * the worker's wake-up connection (as a server crash would, with every
     * other connection) and returns what became of the handler once the
     * wake-up source has listened again. The job is enqueued once the
     * worker listens: a job claimed before then is proved on disk by the
     * heartbeat the run sends when its connection starts listening.
     */
    async function cutWhileRunning(options: { readonly durableClaims: boolean }): Promise<{ reason: unknown }> {
      const applicationName = `${t.applicationName}:listen`;
      const wakeups = new PostgresWakeupSource({
        connectionString: t.connectionString,
        schema: t.schema,
        applicationName,
        reconnectMinDelayMs: 20,
        onError: () => undefined,
      });
      const started = deferred();
      let reason: unknown;
      const worker = new ScriptedWorker(
        t.store,
        {
          process: async (_item, ctx) => {
            started.resolve();
            await new Promise((resolve) => ctx.signal.addEventListener("abort", resolve, { once: true }));
            reason = ctx.signal.reason;
          },
        },
        { leaseMs: 60_000, ...options },
      );
      const stop = new AbortController();
      const run = worker.start({ mode: "loop", wakeups, signal: stop.signal, shutdownTimeoutMs: 0 });
      try {
        const pids = async (): Promise<number[]> =>
          (await sql<{ pid: number }>`select pid from pg_stat_activity where application_name = ${applicationName}`.execute(t.db)).rows.map(
            (entry) => entry.pid,
          );
        const [pid] = await eventually(async () => ((await pids()).length === 1 && wakeups.listening ? pids() : undefined), {
          timeoutMs: 10_000,
          what: "the listener",
        });
        await enqueue(1);
        await started.promise;
        await sql`select pg_terminate_backend(${pid}::integer)`.execute(t.db);
        // A new listener means the loss was handled: the source reconnects only after telling its subscribers.
        await eventually(async () => wakeups.listening && (await pids()).some((other) => other !== pid), { timeoutMs: 10_000, what: "a new listener" });
        return { reason };
      } finally {
        stop.abort();
        await run;
        await wakeups.close();
      }
    }

    it("stops the handler of a claim no later write has proved flushed: a crash may have undone it", async () => {
      const { reason } = await cutWhileRunning({ durableClaims: false });
      expect(errorCodeOf(reason)).to.equal(ErrorCode.LeaseLost);
      expect((reason as Error).message)
        .to.contain("may not have reached disk")
        .and.contain("wake-up connection was lost");
    });

    it("lets the handler of a durable claim run on", async () => {
      const { reason } = await cutWhileRunning({ durableClaims: true });
      expect(reason, "not aborted before the stop").to.equal(undefined);
    });
  });

  it("stops the earlier run and writes nothing for it when a crash undid its claim and the worker claims the same attempt again", async () => {
    const id = await enqueue(1);
    const firstStarted = deferred();
    let runs = 0;
    let firstReason: unknown;
    const worker = new ScriptedWorker(
      t.store,
      {
        process: async (_item, ctx) => {
          runs += 1;
          if (runs > 1) return "second";
          firstStarted.resolve();
          await new Promise((resolve) => ctx.signal.addEventListener("abort", resolve, { once: true }));
          firstReason = ctx.signal.reason;
          return "first";
        },
      },
      { leaseMs: 60_000 },
    );
    let wake: (queue: string) => void = () => undefined;
    const wakeups = {
      subscribe: (_queues: readonly string[], listener: { readonly onWake: (queue: string) => void }) => {
        wake = listener.onWake;
        return Promise.resolve({ close: () => Promise.resolve() });
      },
    };
    const stop = new AbortController();
    const run = worker.start({ mode: "loop", wakeups, signal: stop.signal });
    await firstStarted.promise;
    // What a server crash before the claim's WAL flush leaves behind: the job queued again, its attempt uncounted.
    await sql`update ${sql.id(t.schema, "jobs")} set state = 'queued', attempts = attempts - 1, locked_by = null, locked_until = null,
      started_at = null where id = ${id}`.execute(t.db);
    wake(TaskJob.name);
    await eventually(async () => (await row(id)).state === "succeeded", { timeoutMs: 10_000, what: "the job to succeed" });
    stop.abort();
    const summary = await run;

    expect(errorCodeOf(firstReason)).to.equal(ErrorCode.LeaseLost);
    expect((firstReason as Error).message).to.contain("the same attempt was claimed again");
    expect(await row(id)).to.include({ state: "succeeded", attempts: 1, result: "second" });
    expect(summary).to.include({ claimed: 2, succeeded: 1, leaseLost: 1 });
    const history = await t.store.listAttempts({ jobId: id });
    expect(history.map((attempt) => [attempt.attempt, attempt.outcome])).to.deep.equal([[1, "succeeded"]]);
  });

  it("survives its database connections being terminated mid-run", async () => {
    const total = 150;
    for (let n = 0; n < total; n += 1) await enqueue(n);
    let done = 0;
    const worker = new ScriptedWorker(
      t.store,
      {
        process: async () => {
          done += 1;
          if (done === 50 || done === 100) {
            await sql`select pg_terminate_backend(pid) from pg_stat_activity
                      where datname = current_database() and pid <> pg_backend_pid() and application_name = ${t.applicationName}`.execute(t.db);
          }
        },
      },
      { concurrency: 4 },
    );
    const summary = await worker.start();
    expect(summary.stoppedBecause).to.equal("drained");
    const succeeded = await eventually(
      async () => {
        const { rows } = await sql<{ n: number }>`
        select count(*)::int as n from ${sql.id(t.schema, "all_jobs")} where state = 'succeeded'`.execute(t.db);
        return rows[0]?.n === total ? total : 0;
      },
      { timeoutMs: 1_000, what: "every job to succeed" },
    ).catch(async () => {
      const { rows } = await sql<{ state: string; n: number }>`
        select state, count(*)::int as n from ${sql.id(t.schema, "all_jobs")} group by state`.execute(t.db);
      throw new Error(`not every job succeeded: ${JSON.stringify(rows)} summary=${JSON.stringify(summary)}`);
    });
    expect(succeeded).to.equal(total);
  });
});
