import { expect } from "chai";
import { ConfigError, PayloadError } from "../../src/errors/config-errors";
import { ErrorCode } from "../../src/errors/error-codes";
import { errorCodeOf } from "../../src/errors/stint-error";
import { buildNewJob } from "../../src/job/enqueue-options";
import type { JsonObject } from "../../src/job/json-types";
import { MAX_JOB_LOG_LINES, MAX_META_BYTES } from "../../src/limits";
import { eventually } from "../../src/testing/eventually";
import { ManualClock } from "../../src/testing/manual-clock";
import { InMemoryJobStore } from "../../src/testing/memory/in-memory-job-store";
import type { JobLogAppend, MetaUpdate } from "../../src/store/job-store";
import { LOG_FLUSH_DELAY_MS } from "../../src/worker/job-log-writer";
import { gate, Task, TaskWorker } from "../support/task-worker";

/** The in-memory store, counting the writes a handler's `ctx.log` and `ctx.updateMeta` make. */
class CountingStore extends InMemoryJobStore {
  readonly appends: JobLogAppend[] = [];
  readonly metaUpdates: MetaUpdate[] = [];

  override appendJobLog(params: JobLogAppend): Promise<boolean> {
    this.appends.push(params);
    return super.appendJobLog(params);
  }

  override updateJobMeta(params: MetaUpdate): Promise<boolean> {
    this.metaUpdates.push(params);
    return super.updateJobMeta(params);
  }
}

describe("a handler writing to its job (ctx.log, ctx.updateMeta)", () => {
  let clock: ManualClock;
  let store: CountingStore;

  beforeEach(() => {
    clock = new ManualClock();
    store = new CountingStore({ clock });
  });

  it("makes no write at all for handlers that never log or update meta", async () => {
    await store.enqueueMany(Array.from({ length: 20 }, (_, n) => buildNewJob(Task, { n })));
    const summary = await new TaskWorker(store, async (_item, ctx) => ctx.log.debug("process log only"), { concurrency: 4, clock }).start();
    expect(summary).to.include({ succeeded: 20 });
    expect(store.appends).to.deep.equal([]);
    expect(store.metaUpdates).to.deep.equal([]);
  });

  it("writes a quick handler's lines in one statement before its outcome, keeping the newest and counting the rest", async () => {
    const { id } = await store.enqueue(buildNewJob(Task, { n: 1 }));
    const summary = await new TaskWorker(
      store,
      async (_item, ctx) => {
        for (let n = 0; n < 250; n += 1) ctx.log(`line ${n}`, { n });
      },
      { clock },
    ).start();
    expect(summary).to.include({ succeeded: 1 });
    expect(store.appends).to.have.length(1);
    const [log] = await store.listJobLogs({ jobId: id });
    expect(log!.lines).to.have.length(MAX_JOB_LOG_LINES);
    expect(log!.lines[0]).to.deep.include({ message: `line ${250 - MAX_JOB_LOG_LINES}`, fields: { n: 250 - MAX_JOB_LOG_LINES } });
    expect(log!.lines[0]!.at.getTime()).to.equal(clock.now());
    expect(log!.droppedLines).to.equal(250 - MAX_JOB_LOG_LINES);
  });

  it("writes the lines of a handler still running within LOG_FLUSH_DELAY_MS, and the later ones with its outcome", async () => {
    const { id } = await store.enqueue(buildNewJob(Task, { n: 1 }));
    const hold = gate();
    const run = new TaskWorker(
      store,
      async (_item, ctx) => {
        ctx.log("first");
        ctx.log("second");
        await hold.opened;
        ctx.log("last");
      },
      { clock },
    ).start();
    await eventually(() => (store.appends.length === 0 && clock.pendingSleeps > 0 ? true : undefined), { what: "the handler to log" });
    await clock.advance(LOG_FLUSH_DELAY_MS);
    await eventually(() => (store.appends.length === 1 ? true : undefined), { what: "the first batch" });
    expect((await store.getJob({ id }))!.state).to.equal("running");
    expect((await store.listJobLogs({ jobId: id }))[0]!.lines.map((line) => line.message)).to.deep.equal(["first", "second"]);
    hold.open();
    expect(await run).to.include({ succeeded: 1 });
    expect(store.appends).to.have.length(2);
    expect((await store.listJobLogs({ jobId: id }))[0]!.lines.map((line) => line.message)).to.deep.equal(["first", "second", "last"]);
  });

  it("refuses log fields that are not a small JSON object at once, in the handler", async () => {
    await store.enqueue(buildNewJob(Task, { n: 1 }));
    const errors: unknown[] = [];
    await new TaskWorker(
      store,
      async (_item, ctx) => {
        for (const fields of [[1], { n: Number.NaN }, { big: "x".repeat(2_000) }]) {
          try {
            ctx.log("refused", fields as unknown as JsonObject);
          } catch (error) {
            errors.push(error);
          }
        }
      },
      { clock },
    ).start();
    expect(errors).to.have.length(3);
    for (const error of errors) expect(error).to.be.instanceOf(PayloadError);
    expect((errors[2] as PayloadError).sizeBytes).to.be.greaterThan(1_024);
    expect(store.appends).to.deep.equal([]);
  });

  it("merges meta into the job, shows it as ctx.meta at once and to the next attempt, and refuses stint's keys and an oversized merge before a round trip", async () => {
    const { id } = await store.enqueue(buildNewJob(Task, { n: 1 }, { meta: { tenant: "acme" } }));
    const seen: JsonObject[] = [];
    const refused: unknown[] = [];
    await new TaskWorker(
      store,
      async (_item, ctx) => {
        seen.push(ctx.meta);
        if (ctx.job.attempt > 1) return;
        await ctx.updateMeta({ step: "uploaded" });
        seen.push(ctx.meta);
        const patches: JsonObject[] = [{ traceparent: "00-x" }, { "stint.mine": 1 }, { big: "x".repeat(MAX_META_BYTES) }];
        for (const patch of patches) {
          await ctx.updateMeta(patch).catch((error: unknown) => refused.push(error));
        }
        throw new Error("try again");
      },
      { clock, backoff: { baseMs: 0, maxMs: 0, jitter: 0 } },
    ).start();
    expect(seen).to.deep.equal([{ tenant: "acme" }, { tenant: "acme", step: "uploaded" }, { tenant: "acme", step: "uploaded" }]);
    expect(refused.map((error) => (error as Error).constructor.name)).to.deep.equal([ConfigError.name, ConfigError.name, PayloadError.name]);
    expect((refused[2] as PayloadError).message).to.match(/meta would be \d+ bytes of JSON after the update, more than the limit of 8192 bytes/);
    expect(store.metaUpdates).to.have.length(1);
    expect((await store.getJob({ id }))!.meta).to.deep.equal({ tenant: "acme", step: "uploaded" });
  });

  it("tells a handler whose job was cancelled meanwhile that its meta update did not apply", async () => {
    const { id } = await store.enqueue(buildNewJob(Task, { n: 1 }));
    let refusal: unknown;
    await new TaskWorker(
      store,
      async (_item, ctx) => {
        await store.cancelJob({ id });
        refusal = await ctx.updateMeta({ step: "late" }).then(
          () => undefined,
          (error: unknown) => error,
        );
      },
      { clock },
    ).start();
    expect(errorCodeOf(refusal)).to.equal(ErrorCode.LeaseLost);
    expect((await store.getJob({ id }))!.meta).to.deep.equal({});
  });
});
