import { expect } from "chai";
import { container as rootContainer, inject, injectable } from "tsyringe";
import { z } from "zod";
import { registerWorkers, resolveWorker } from "../../src/di/register-core";
import { CLOCK, JOB_STORE, LOGGER } from "../../src/di/tokens";
import { ErrorCode } from "../../src/errors/error-codes";
import { PermanentError, RetryableError } from "../../src/errors/job-errors";
import { errorCodeOf } from "../../src/errors/stint-error";
import { snooze } from "../../src/errors/control-flow";
import { REDACTED } from "../../src/job/secret-fields";
import { MAX_JOB_LOG_LINES, MAX_META_BYTES } from "../../src/limits";
import { defineJob, type ItemOf } from "../../src/job/job-definition";
import type { JobRecord } from "../../src/job/job-record";
import { createSilentLogger } from "../../src/logging/create-logger";
import type { Logger } from "../../src/logging/logger";
import { backoffDelay } from "../../src/policy/backoff";
import type { JobStore } from "../../src/store/job-store";
import type { Clock } from "../../src/time/clock";
import { ManualClock } from "../../src/testing/manual-clock";
import { InMemoryJobStore } from "../../src/testing/memory/in-memory-job-store";
import { runJob } from "../../src/testing/run-job";
import { AbstractQueueWorker } from "../../src/worker/abstract-queue-worker";
import type { JobContext } from "../../src/worker/job-context";
import { SchemaQueueWorker } from "../../src/worker/schema-queue-worker";
import type { WorkerOptions } from "../../src/worker/worker-options";

interface Charge {
  readonly invoiceId: number;
}
const ChargeInvoice = defineJob<Charge>("charge-invoice", { maxAttempts: 3, timeoutMs: 30_000 });
const Receipt = defineJob<{ readonly invoiceId: number }>("send-receipt");

type Handler = (item: Charge, ctx: JobContext) => Promise<unknown>;

/** A worker built by hand, whose handler each test writes. */
class ChargeWorker extends AbstractQueueWorker<Charge> {
  readonly job = ChargeInvoice;
  readonly deaths: string[] = [];

  constructor(
    private readonly handler: Handler,
    options: WorkerOptions = {},
  ) {
    super(new InMemoryJobStore(), createSilentLogger(), { random: () => 0.5, ...options });
  }

  protected parse(payload: unknown): Charge {
    const { invoiceId } = payload as Partial<Charge>;
    if (typeof invoiceId !== "number") throw new Error("invoiceId must be a number");
    return { invoiceId };
  }

  protected processItem(item: Charge, ctx: JobContext): Promise<unknown> {
    return this.handler(item, ctx);
  }

  protected override isRetryable(error: unknown): boolean {
    return !(error instanceof TypeError) && super.isRetryable(error);
  }

  protected override onDead(job: JobRecord, error: Error): void {
    this.deaths.push(`${job.id}: ${error.message}`);
  }
}

interface Card {
  readonly invoiceId: number;
  readonly cardNumber: string;
}
const ChargeCard = defineJob<Card>("charge-card", { secretFields: ["cardNumber"] });

/** A worker whose job kind keeps `cardNumber` secret. */
class CardWorker extends AbstractQueueWorker<Card> {
  readonly job = ChargeCard;

  constructor(private readonly handler: (item: Card, ctx: JobContext) => Promise<unknown>) {
    super(new InMemoryJobStore(), createSilentLogger());
  }

  protected parse(payload: unknown): Card {
    return payload as Card;
  }

  protected processItem(item: Card, ctx: JobContext): Promise<unknown> {
    return this.handler(item, ctx);
  }
}

/** What `work` threw (undefined: it did not). */
async function thrownBy(work: () => Promise<unknown>): Promise<Error | undefined> {
  return work().then(
    () => undefined,
    (thrown: unknown) => thrown as Error,
  );
}

const welcome = z.strictObject({ email: z.email() });
const SendWelcome = defineJob<typeof welcome, { greeted: string }>("send-welcome", { schema: welcome });

@injectable()
class SendWelcomeWorker extends SchemaQueueWorker<ItemOf<typeof SendWelcome>, { greeted: string }> {
  readonly job = SendWelcome;

  constructor(@inject(JOB_STORE) store: JobStore, @inject(LOGGER) log: Logger, @inject(CLOCK) clock: Clock) {
    super(store, log, { clock });
  }

  protected async processItem(item: { email: string }): Promise<{ greeted: string }> {
    return { greeted: item.email };
  }
}

describe("runJob", () => {
  it("runs one attempt of a worker built by hand and returns its result, with the job as stored", async () => {
    const worker = new ChargeWorker(async (item) => ({ charged: item.invoiceId }));
    const outcome = await runJob(worker, { invoiceId: 812 });
    expect(outcome).to.include({ status: "succeeded", recorded: true });
    expect(outcome.status === "succeeded" && outcome.result).to.deep.equal({ charged: 812 });
    expect(outcome.job).to.include({ state: "succeeded", attempts: 1, queue: "charge-invoice", lockedBy: worker.workerId });
    expect(outcome.job.result).to.deep.equal({ charged: 812 });
  });

  it("runs a worker resolved from a container, validating the payload with the kind's schema", async () => {
    const clock = new ManualClock();
    const store = new InMemoryJobStore({ clock });
    const container = rootContainer.createChildContainer();
    container.registerInstance(JOB_STORE, store);
    container.registerInstance(LOGGER, createSilentLogger());
    container.registerInstance(CLOCK, clock);
    registerWorkers(container, [SendWelcomeWorker]);
    const worker = resolveWorker(container, "send-welcome") as SendWelcomeWorker;

    const welcomed = await runJob(worker, { email: "ada@example.com" }, { store });
    const greeted: string | false = welcomed.status === "succeeded" && welcomed.result.greeted; // the worker's result type
    expect(greeted).to.equal("ada@example.com");

    const refused = await runJob(worker, { email: "not an address" }, { store });
    expect(refused.status).to.equal("dead");
    expect(refused.status === "dead" && errorCodeOf(refused.error)).to.equal(ErrorCode.Parse);
    expect(refused.job.lastError).to.match(/^ParseError: invalid payload: payload\.email: /);
    expect(refused.job.attempts, "a refused payload gets no retries").to.equal(1);
  });

  it("schedules a retry after the backoff of the attempt, on the run's clock", async () => {
    const clock = new ManualClock();
    const worker = new ChargeWorker(async () => {
      throw new Error("the bank timed out");
    });
    const outcome = await runJob(worker, { invoiceId: 812 }, { clock, attempt: 2 });
    expect(outcome.status).to.equal("retry");
    if (outcome.status !== "retry") return;
    const delayMs = backoffDelay(2, worker.options.backoff, () => 0.5);
    expect(outcome.delayMs).to.equal(delayMs);
    expect(outcome.runAt.getTime()).to.equal(clock.now() + delayMs);
    expect(outcome.error.message).to.equal("the bank timed out");
    expect(outcome.job).to.include({ state: "failed", attempts: 2, errorCode: ErrorCode.Unknown });
  });

  it("takes the delay a RetryableError asks for", async () => {
    const outcome = await runJob(new ChargeWorker(async () => Promise.reject(new RetryableError("rate limited", { retryAfterMs: 45_000 }))), { invoiceId: 1 });
    expect(outcome).to.include({ status: "retry", delayMs: 45_000 });
  });

  it("makes the job dead when the last attempt fails, and calls onDead once with the error", async () => {
    const worker = new ChargeWorker(async () => {
      throw new Error("still down");
    });
    const outcome = await runJob(worker, { invoiceId: 812 }, { attempt: 3 });
    expect(outcome).to.include({ status: "dead", onDeadError: undefined });
    expect(outcome.job).to.include({ state: "dead", attempts: 3 });
    expect(worker.deaths).to.deep.equal([`${outcome.job.id}: still down`]);
  });

  it("makes the job dead at once for an error isRetryable refuses, or a permanent one", async () => {
    const typeError = await runJob(new ChargeWorker(async () => Promise.reject(new TypeError("amount is not a number"))), { invoiceId: 1 });
    expect(typeError).to.include({ status: "dead" });
    expect(typeError.job.attempts).to.equal(1);
    const permanent = await runJob(new ChargeWorker(async () => Promise.reject(new PermanentError("no such invoice"))), { invoiceId: 1 });
    expect(permanent.status === "dead" && permanent.error.message).to.equal("no such invoice");
  });

  it("refuses a payload its parse rejects: dead, with the message", async () => {
    const outcome = await runJob(new ChargeWorker(async () => "never"), { invoiceId: "812" } as unknown as Charge);
    expect(outcome.status).to.equal("dead");
    expect(outcome.job.lastError).to.match(/^ParseError: invalid payload: invoiceId must be a number/);
  });

  it("snoozes without spending the attempt", async () => {
    const clock = new ManualClock();
    const outcome = await runJob(new ChargeWorker(async () => Promise.reject(snooze(60_000))), { invoiceId: 1 }, { clock });
    expect(outcome).to.include({ status: "snoozed", delayMs: 60_000 });
    expect(outcome.status === "snoozed" && outcome.runAt.getTime()).to.equal(clock.now() + 60_000);
    expect(outcome.job).to.include({ state: "queued", attempts: 1, maxAttempts: 4 });
  });

  it("times the attempt out on a manual clock, without waiting", async () => {
    const clock = new ManualClock();
    const worker = new ChargeWorker((_item, ctx) => new Promise((_resolve, reject) => ctx.signal.addEventListener("abort", () => reject(ctx.signal.reason))));
    const running = runJob(worker, { invoiceId: 1 }, { clock, timeoutMs: 5_000 });
    await clock.advance(5_000);
    const outcome = await running;
    expect(outcome.status).to.equal("retry");
    expect(outcome.status === "retry" && errorCodeOf(outcome.error)).to.equal(ErrorCode.Timeout);
    expect(outcome.durationMs).to.equal(5_000);
  });

  it("stops the handler with the cancel when its job is cancelled while it runs", async () => {
    const clock = new ManualClock();
    const store = new InMemoryJobStore({ clock });
    const worker = new ChargeWorker(
      (_item, ctx) =>
        new Promise((_resolve, reject) => {
          void store.cancelJob({ id: ctx.job.id });
          ctx.signal.addEventListener("abort", () => reject(ctx.signal.reason));
        }),
      { leaseMs: 3_000 },
    );
    const running = runJob(worker, { invoiceId: 1 }, { clock, store });
    await clock.advance(worker.options.heartbeatIntervalMs); // the heartbeat finds the job cancelled
    const outcome = await running;
    expect(outcome).to.include({ status: "cancelled", recorded: false });
    expect(outcome.status === "cancelled" && errorCodeOf(outcome.error)).to.equal(ErrorCode.Cancelled);
    expect(outcome.job.state).to.equal("cancelled");
  });

  it("reports a success the handler returned after its own job was cancelled as cancelled, not recorded", async () => {
    const store = new InMemoryJobStore();
    const worker = new ChargeWorker(async (_item, ctx) => {
      await store.cancelJob({ id: ctx.job.id });
      return "charged";
    });
    const outcome = await runJob(worker, { invoiceId: 1 }, { store });
    expect(outcome).to.include({ status: "cancelled", recorded: false });
    expect(outcome.job.state).to.equal("cancelled");
  });

  it("gives the job back, unspent, when the run's signal aborts", async () => {
    const stop = new AbortController();
    const worker = new ChargeWorker((_item, ctx) => {
      stop.abort();
      return new Promise((_resolve, reject) => ctx.signal.addEventListener("abort", () => reject(ctx.signal.reason)));
    });
    const outcome = await runJob(worker, { invoiceId: 1 }, { signal: stop.signal });
    expect(outcome).to.include({ status: "released", recorded: true });
    expect(outcome.job).to.include({ state: "queued", attempts: 1, maxAttempts: 4 });
  });

  it("lets the handler enqueue, report progress and run an effect once, against the store it returns", async () => {
    let sent = 0;
    const worker = new ChargeWorker(async (item, ctx) => {
      ctx.progress({ step: "charged" });
      await ctx.enqueue(Receipt, { invoiceId: item.invoiceId });
      return ctx.once(`receipt:${item.invoiceId}`, async () => (sent += 1));
    });
    const first = await runJob(worker, { invoiceId: 812 }, { meta: { tenant: "acme" } });
    const second = await runJob(worker, { invoiceId: 812 }, { store: first.store });
    expect(sent, "the effect ran once for both attempts").to.equal(1);
    expect(second.status === "succeeded" && second.result).to.equal(1);
    expect(first.job.progress).to.deep.equal({ step: "charged" });
    expect(first.job.meta).to.deep.equal({ tenant: "acme" });
    const receipts = await first.store.listJobs({ queue: "send-receipt", limit: 10 });
    expect(receipts.map((job) => job.payload)).to.deep.equal([{ invoiceId: 812 }, { invoiceId: 812 }]);
  });

  it("returns the handler's ctx.log lines in order, with their fields and the times of the run's clock", async () => {
    const clock = new ManualClock();
    const startedAt = clock.now();
    const worker = new ChargeWorker(async (item, ctx) => {
      ctx.log("Charging the card", { invoiceId: item.invoiceId, cents: 1_250 });
      await clock.advance(1_500); // past the writer's batching delay: the first line is written while the handler runs
      ctx.log("Charged");
      return "charged";
    });
    const outcome = await runJob(worker, { invoiceId: 812 }, { clock });
    expect(outcome.status).to.equal("succeeded");
    expect(outcome.logs.map((line) => ({ at: line.at.getTime(), message: line.message, fields: line.fields }))).to.deep.equal([
      { at: startedAt, message: "Charging the card", fields: { invoiceId: 812, cents: 1_250 } },
      { at: startedAt + 1_500, message: "Charged", fields: null },
    ]);
    expect((await outcome.store.listJobLogs({ jobId: outcome.job.id }))[0]?.lines, "the lines the store keeps").to.deep.equal(outcome.logs);
  });

  it("redacts the job kind's secret fields from the lines, as the worker does", async () => {
    const worker = new CardWorker(async (item, ctx) => {
      ctx.log(`Charging card ${item.cardNumber}`, { card: item.cardNumber, invoiceId: item.invoiceId });
      return "charged";
    });
    const outcome = await runJob(worker, { invoiceId: 812, cardNumber: "4242424242424242" });
    expect(outcome.logs.map((line) => [line.message, line.fields])).to.deep.equal([[`Charging card ${REDACTED}`, { card: REDACTED, invoiceId: 812 }]]);
  });

  it("keeps only the newest lines within the per-attempt cap", async () => {
    const lines = MAX_JOB_LOG_LINES + 20;
    const worker = new ChargeWorker(async (_item, ctx) => {
      for (let index = 0; index < lines; index += 1) ctx.log(`row ${index}`);
      return "imported";
    });
    const outcome = await runJob(worker, { invoiceId: 1 });
    expect(outcome.logs).to.have.length(MAX_JOB_LOG_LINES);
    expect(outcome.logs[0]?.message).to.equal("row 20");
    expect(outcome.logs.at(-1)?.message).to.equal(`row ${lines - 1}`);
    expect((await outcome.store.listJobLogs({ jobId: outcome.job.id }))[0]?.droppedLines).to.equal(20);
  });

  it("returns no lines for a handler that never logs", async () => {
    const outcome = await runJob(new ChargeWorker(async () => "quiet"), { invoiceId: 1 });
    expect(outcome.logs).to.deep.equal([]);
    expect(outcome.meta).to.deep.equal({});
  });

  it("merges ctx.updateMeta into the meta the handler sees and the result returns", async () => {
    const seen: unknown[] = [];
    const worker = new ChargeWorker(async (_item, ctx) => {
      seen.push(ctx.meta);
      await ctx.updateMeta({ step: "uploaded", uploadId: "u-1" });
      seen.push(ctx.meta);
      await ctx.updateMeta({ step: "imported", rows: 3 });
      return "imported";
    });
    const outcome = await runJob(worker, { invoiceId: 1 }, { meta: { tenant: "acme" } });
    expect(seen).to.deep.equal([{ tenant: "acme" }, { tenant: "acme", step: "uploaded", uploadId: "u-1" }]);
    expect(outcome.meta).to.deep.equal({ tenant: "acme", step: "imported", uploadId: "u-1", rows: 3 });
    expect(outcome.job.meta).to.deep.equal(outcome.meta);
  });

  it("refuses a meta key of stint's own and meta over MAX_META_BYTES, as the worker does, changing nothing", async () => {
    const refusals: (Error | undefined)[] = [];
    const worker = new ChargeWorker(async (_item, ctx) => {
      refusals.push(await thrownBy(() => ctx.updateMeta({ traceparent: "00-abc-def-01" })));
      refusals.push(await thrownBy(() => ctx.updateMeta({ "stint.step": "x" })));
      refusals.push(await thrownBy(() => ctx.updateMeta({ blob: "x".repeat(MAX_META_BYTES) })));
      return "done";
    });
    const outcome = await runJob(worker, { invoiceId: 1 }, { meta: { tenant: "acme" } });
    expect(refusals.map((error) => errorCodeOf(error))).to.deep.equal([ErrorCode.Config, ErrorCode.Config, ErrorCode.Payload]);
    expect(refusals[0]?.message).to.contain('"traceparent" belongs to stint');
    expect(refusals[2]?.message).to.contain("MAX_META_BYTES");
    expect(outcome.meta).to.deep.equal({ tenant: "acme" });
  });

  it("tells the worker's own listeners, as a run does", async () => {
    const worker = new ChargeWorker(async () => "ok");
    const heard: string[] = [];
    worker.events.on("job.started", (event) => heard.push(`started ${event.attempt}`));
    worker.events.on("job.succeeded", (event) => heard.push(`succeeded ${event.attempt}`));
    await runJob(worker, { invoiceId: 1 }, { attempt: 2 });
    expect(heard).to.deep.equal(["started 2", "succeeded 2"]);
  });

  it("refuses an attempt beyond maxAttempts and an unknown option, naming them", async () => {
    const worker = new ChargeWorker(async () => "ok");
    const beyond = await runJob(worker, { invoiceId: 1 }, { attempt: 4 }).then(
      () => undefined,
      (thrown: unknown) => thrown as Error,
    );
    expect(beyond?.message).to.contain("attempt");
    const typo = await runJob(worker, { invoiceId: 1 }, { attempts: 2 } as never).then(
      () => undefined,
      (thrown: unknown) => thrown as Error,
    );
    expect(typo?.message).to.contain("runJob.attempts");
  });
});
