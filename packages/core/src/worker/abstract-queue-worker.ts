import { ConfigError } from "../errors/config-errors";
import type { RetryableError } from "../errors/job-errors";
import { ErrorCode } from "../errors/error-codes";
import { hasErrorCode } from "../errors/stint-error";
import type { JobDefinition } from "../job/job-definition";
import type { JobRecord } from "../job/job-record";
import type { Logger } from "../logging/logger";
import { logLines } from "../events/log-lines";
import { RunEvents } from "../events/run-events";
import { WorkerEvents } from "../events/worker-events";
import { backoffDelay } from "../policy/backoff";
import { isRetryableByDefault } from "../policy/classify-error";
import { checkedJobStore } from "../store/checked-job-store";
import type { JobStore } from "../store/job-store";
import type { JobHooks } from "./attempt-executor";
import type { BatchContext, BatchEntry } from "./batch-context";
import type { DeadHook } from "./dead-hook-runner";
import type { DeadJobContext } from "./dead-job-context";
import type { FailureDecision, JobContext } from "./job-context";
import type { RunSummary } from "./run-summary";
import { newWorkerId } from "./worker-id";
import { resolveWorkerOptions, type ResolvedWorkerOptions, type WorkerOptions } from "./worker-options";
import { WorkerRun } from "./worker-run";
import type { RunOptions } from "./run-options";
import { validateRunOptions, WORKER_OVERRIDES } from "./run-options";

/** A worker's hooks bound to it: what a run (and `runJob`) calls. */
export interface BoundWorkerHooks<T> extends JobHooks<T> {
  readonly onDead: DeadHook;
}

/** Reads a worker's bound hooks; set by the class's static block, which alone can reach its private method. */
let hooksOf: <T>(worker: AbstractQueueWorker<T>) => BoundWorkerHooks<T>;

/**
 * A worker's hooks bound to it, as a run calls them. Not part of the
 * worker's public shape (nor exported by an entry point): the test kit's
 * `runJob` runs one attempt through them.
 */
export function workerHooks<T>(worker: AbstractQueueWorker<T>): BoundWorkerHooks<T> {
  return hooksOf(worker);
}

/**
 * The base class of every worker: one subclass per job kind. The subclass
 * says which kind (`job`), how to read a payload (`parse`) and what to do
 * (`processItem`); it may refine `isRetryable` and `handleFailure`, and
 * react to a job that gave up in `onDead`. The base class owns everything
 * else: claiming with `SKIP LOCKED`, the lease and its heartbeat, timeouts,
 * fenced outcome writes, retries with backoff, dead letters, logging and
 * graceful shutdown.
 *
 * The skeleton `start()` runs, in order: start, claim, parse,
 * `processItem`, `isRetryable` / `handleFailure`, finalize, `onDead`,
 * summary (`worker-run.ts`, `claim-loop.ts`, `attempt-executor.ts`,
 * `run-shutdown.ts`); what each step does: ARCHITECTURE.md, "The life of a job".
 *
 * @example
 * ```ts
 * @injectable()
 * class SendInvoiceWorker extends AbstractQueueWorker<SendInvoice> {
 *   readonly job = SendInvoice;
 *   constructor(@inject(JOB_STORE) store: JobStore, @inject(LOGGER) log: Logger, private readonly mailer: Mailer) {
 *     super(store, log, { concurrency: 5, leaseMs: 120_000 });
 *   }
 *   protected parse(payload: unknown): SendInvoice {
 *     if (!isInvoicePayload(payload)) throw new Error("invoiceId must be a positive integer");
 *     return payload;
 *   }
 *   protected async processItem(item: SendInvoice, ctx: JobContext) {
 *     await this.mailer.send(item.invoiceId, { signal: ctx.signal });
 *   }
 * }
 * const summary = await container.resolve(SendInvoiceWorker).start();
 * ```
 */
export abstract class AbstractQueueWorker<T, R = unknown> {
  /** The job kind this worker runs; its name is the queue it claims from; its items are `T`. */
  abstract readonly job: JobDefinition<any, R, T>;

  /**
   * This worker's typed events (`job.started`, `job.succeeded`,
   * `job.failed`, `job.dead`, … see {@link WorkerEventMap}); listeners are
   * never awaited and cannot change an outcome.
   *
   * @example
   * ```ts
   * worker.events.on("job.failed", (event) => console.log(event.jobId, event.willRetry, event.retryAt));
   * ```
   */
  readonly events: WorkerEvents;

  readonly #store: JobStore;
  readonly #log: Logger;
  readonly #options: ResolvedWorkerOptions;
  readonly #given: Readonly<WorkerOptions>;
  #workerId: string | undefined;
  #running = false;

  /**
   * Validates `options` (throws `ConfigError` naming the option); starts
   * nothing. `store` is wrapped in a `CheckedJobStore` unless it is one.
   */
  constructor(store: JobStore, log: Logger, options: WorkerOptions = {}) {
    if (store === null || typeof store !== "object") throw new ConfigError("store", "a JobStore is required");
    if (log === null || typeof log !== "object") throw new ConfigError("log", "a Logger is required");
    this.#store = checkedJobStore(store);
    this.#log = log;
    this.#options = resolveWorkerOptions(options);
    this.#given = Object.freeze({ ...options });
    this.events = new WorkerEvents({ log });
  }

  /** The queue this worker claims from (the job kind's name). */
  get queue(): string {
    return this.job.name;
  }

  /** This worker incarnation's identity, the owner recorded on the jobs it claims. */
  get workerId(): string {
    this.#workerId ??= this.#options.workerId ?? newWorkerId();
    return this.#workerId;
  }

  /** The validated, frozen options. */
  get options(): ResolvedWorkerOptions {
    return this.#options;
  }

  /**
   * The options the constructor passed, before defaults (a frozen copy):
   * what `stint run --print-config` reports as set in code. A run's
   * overrides (`start({ concurrency })`, the STINT_* variables) apply on
   * top of these.
   */
  get givenOptions(): Readonly<WorkerOptions> {
    return this.#given;
  }

  /**
   * Runs the queue, then returns what happened. In the default `drain` mode
   * it stops once no job is due; `mode: "loop"` keeps waiting for more. Either
   * stops early when `maxJobs` are claimed, `maxRuntimeMs` passes or `signal`
   * aborts (running jobs then get the shutdown timeout before they are given
   * back). The fixed template: logs the start, measures, catches everything
   * and logs a summary. It rejects only for programmer errors found before
   * the first claim (invalid run options, a second `start()` at once).
   *
   * @example
   * ```ts
   * const controller = new AbortController();
   * process.once("SIGTERM", () => controller.abort());
   * const summary = await worker.start({ signal: controller.signal });
   * ```
   */
  async start(runOptions: RunOptions = {}): Promise<RunSummary> {
    if (this.#running) throw new ConfigError("start", `the worker for ${this.queue} is already running; create another instance to run in parallel`);
    validateRunOptions(runOptions);
    const options = this.#optionsFor(runOptions);
    this.#running = true;
    try {
      return await this.#run(runOptions, options);
    } finally {
      this.#running = false;
    }
  }

  /** The worker's options with a run's overrides on top, checked by the same rules; the constructor's when there are none. */
  #optionsFor(runOptions: RunOptions): ResolvedWorkerOptions {
    const overrides: WorkerOptions = {};
    for (const key of WORKER_OVERRIDES) if (runOptions[key] !== undefined) Object.assign(overrides, { [key]: runOptions[key] });
    return Object.keys(overrides).length === 0 ? this.#options : resolveWorkerOptions({ ...this.#given, ...overrides });
  }

  async #run(runOptions: RunOptions, options: ResolvedWorkerOptions): Promise<RunSummary> {
    const queue = this.queue;
    const workerId = this.workerId;
    const log = this.#log.child({ queue, workerId });
    const secretFields = this.job.secretFields ?? [];
    runOptions.events?.reportListenerErrorsTo(log);
    const hubs = [logLines(log, secretFields), this.events, ...(runOptions.events === undefined ? [] : [runOptions.events])];
    const events = new RunEvents(hubs, { queue, workerId, clock: options.clock });
    events.workerStarted(options.concurrency, options.leaseMs);
    const { onDead, ...hooks } = this.#hooks();
    const run = new WorkerRun<T>({ store: this.#store, log, options, workerId, queue, hooks, onDead, events });
    const summary = await run.run(runOptions);
    events.workerStopped(summary);
    return summary;
  }

  static {
    hooksOf = (worker) => worker.#hooks();
  }

  /** The hooks bound to this worker, as a run calls them (see {@link workerHooks}). */
  #hooks(): BoundWorkerHooks<T> {
    return {
      parse: (payload) => this.parse(payload),
      process: async (item, ctx) => this.processItem(item, ctx),
      processBatch: async (entries, ctx) => this.processBatch(entries, ctx),
      decide: (item, error, ctx) => this.handleFailure(item, error, ctx),
      secretFields: this.job.secretFields ?? [],
      onDead: (job, error, ctx) => this.onDead(job, error, ctx),
    };
  }

  /**
   * Turns a stored payload into the item `processItem` works on. Called
   * once per attempt, before `processItem`. Throw when the payload is
   * invalid: the job goes to `dead` at once (no retries) with your message
   * as `last_error`, and `processItem` is not called. May be async. A job
   * kind defined with a `schema` needs none: extend `SchemaQueueWorker`,
   * whose `parse` validates with it (a `parse` written here replaces the
   * schema's check on claim; `enqueue` still checks).
   */
  protected abstract parse(payload: unknown): T | Promise<T>;

  /**
   * Does the work for one job. Resolve to succeed (the value, if any, is
   * stored as the job's `result`, typed `R` when the job kind declares a
   * result); throw to fail the attempt, after which `handleFailure` decides
   * what happens. Honour `ctx.signal`: it fires on the job's timeout, on a
   * lost lease and at shutdown.
   */
  protected abstract processItem(item: T, ctx: JobContext): Promise<R>;

  /**
   * Does the work for a batch of jobs, when the worker's `batchSize` is
   * above 1 (one call per handler slot, with up to `batchSize` jobs whose
   * payloads parsed). Settle a job while the batch runs with
   * `ctx.succeed(entry, result?)` or `ctx.fail(entry, error)`: its outcome
   * is written at once. Resolve to succeed every job not settled yet; throw
   * to fail them all with the error (`handleFailure` then decides, job by
   * job). Honour `ctx.signal` (the batch's timeout, a lost lease, shutdown)
   * and each `entry.ctx.signal` (that job cancelled). The default runs
   * `processItem` on each job in turn.
   *
   * @example
   * ```ts
   * protected override async processBatch(entries: readonly BatchEntry<Email>[], ctx: BatchContext<Email>) {
   *   const answers = await this.mailer.sendMany(entries.map((entry) => entry.item), { signal: ctx.signal });
   *   answers.forEach((answer, index) => (answer.ok ? ctx.succeed(entries[index]!) : ctx.fail(entries[index]!, answer.error)));
   * }
   * ```
   */
  protected async processBatch(entries: readonly BatchEntry<T>[], ctx: BatchContext<T>): Promise<void> {
    for (const entry of entries) {
      if (ctx.signal.aborted) return;
      try {
        ctx.succeed(entry, await this.processItem(entry.item, entry.ctx));
      } catch (thrown) {
        ctx.fail(entry, thrown);
      }
    }
  }

  /**
   * Whether a failure is worth another attempt. Called by the default
   * `handleFailure`. The default ({@link isRetryableByDefault}) treats
   * `PermanentError`, validation, parse and auth errors as permanent and
   * everything else (timeouts, rate limits, 5xx, lost connections) as
   * retryable. Override to teach it your errors; it must not throw.
   */
  protected isRetryable(error: unknown): boolean {
    return isRetryableByDefault(error);
  }

  /**
   * Decides what a failed attempt leads to: `{ action: "retry", delayMs }`
   * or `{ action: "dead" }`. Called after `processItem` throws (or times
   * out), never for parse errors, snoozes, lost leases or shutdown. The
   * default: dead when `isRetryable` says no or no attempt is left; else a
   * retry after the error's `retryAfterMs` or the backoff
   * `min(base·2^(attempt−1), max) ± jitter`. Override to alert, compensate
   * or choose your own delay (call `super.handleFailure` to keep the
   * defaults). If it throws, the job is dead.
   */
  protected handleFailure(_item: T, error: unknown, ctx: JobContext): FailureDecision | Promise<FailureDecision> {
    if (!this.isRetryable(error) || ctx.job.attempt >= ctx.job.maxAttempts) return { action: "dead" };
    const requested = hasErrorCode(error, ErrorCode.Retryable) ? (error as RetryableError).retryAfterMs : undefined;
    const delayMs = requested ?? backoffDelay(ctx.job.attempt, this.#options.backoff, this.#options.random);
    return { action: "retry", delayMs: Math.max(0, Math.round(delayMs)) };
  }

  /**
   * Reacts to a job that gave up: called once per death, after `dead` is
   * committed, whatever the road — a parse failure, a permanent error, the
   * last attempt failing, `handleFailure` answering dead or throwing, or a
   * worker that died (or lost its lease) on the last attempt, whose job the
   * lease rescue made dead in SQL. It runs in a worker of this queue (the
   * one that recorded the death, at once; for a death recorded in SQL, the
   * first to look, within 5 s), outside the handler slots, at most
   * `concurrency` at a time, with `ctx.signal` aborting after
   * `onDeadTimeoutMs`. `error` is the error as thrown when this process
   * recorded the death, else a `RecordedError` with the recorded code and
   * text; `job` is the job as stored now. A throw, a rejection or a timeout
   * is logged and emitted as `job.onDeadFailed`; the job stays dead and the
   * hook is not called again for that death. Cancelled jobs are not dead:
   * an operator chose that. `stint retry` runs the job again, and a new
   * death calls the hook again (`ctx.attempt` tells them apart).
   *
   * A death is recorded durably before the hook runs and forgotten once it
   * has run, so the hook runs once per death unless the process dies (or
   * loses its database) between calling it and recording it done: then
   * another worker calls it again (`ctx.delivery` > 1). The default does
   * nothing.
   *
   * @example
   * ```ts
   * protected override async onDead(job: JobRecord, error: Error, ctx: DeadJobContext) {
   *   await this.#db.insertInto("failed_invoices")
   *     .values({ job_id: job.id, attempt: ctx.attempt, reason: error.message })
   *     .onConflict((c) => c.doNothing()) // a second delivery writes nothing
   *     .execute();
   * }
   * ```
   */
  protected onDead(_job: JobRecord, _error: Error, _ctx: DeadJobContext): void | Promise<void> {}
}
