import { ConfigError } from "../errors/config-errors";
import { ShutdownError } from "../errors/job-errors";
import { logLines } from "../events/log-lines";
import { RunEvents } from "../events/run-events";
import { WorkerEvents } from "../events/worker-events";
import { buildNewJob } from "../job/enqueue-options";
import type { PayloadOf } from "../job/job-definition";
import type { JsonObject } from "../job/json-types";
import type { Logger } from "../logging/logger";
import type { Clock } from "../time/clock";
import { rejectUnknownOptions } from "../validation/option-checks";
import { workerHooks, type AbstractQueueWorker } from "../worker/abstract-queue-worker";
import { AttemptPipeline } from "../worker/attempt-pipeline";
import type { ResolvedWorkerOptions } from "../worker/worker-options";
import { InMemoryJobStore } from "./memory/in-memory-job-store";
import { toRunJobResult, type RunJobResult } from "./run-job-result";

/**
 * Options of {@link runJob}.
 *
 * @example
 * ```ts
 * await runJob(worker, { invoiceId: 812 }, { attempt: 3, maxAttempts: 3, clock: new ManualClock(), meta: { tenant: "acme" } });
 * ```
 */
export interface RunJobOptions {
  /** The attempt to run (the attempts before it count as spent). Default 1. */
  readonly attempt?: number;
  /** The job's attempts in all. Default the job kind's. */
  readonly maxAttempts?: number;
  /** The attempt's time limit in ms, or `null` for none. Default the job kind's. */
  readonly timeoutMs?: number | null;
  /** The job's `meta` (`ctx.meta`). */
  readonly meta?: JsonObject;
  /**
   * The clock of the attempt (its timeout, lease and durations) and of the
   * default store. Default the worker's own (`options.clock`, the system
   * clock unless it was given one). Pass a `ManualClock` and advance it to
   * reach a timeout or a lapsed lease without waiting.
   */
  readonly clock?: Clock;
  /** The store to run against, to look at or to seed (an earlier job holding a dedupe key). Default a fresh one on `clock`. */
  readonly store?: InMemoryJobStore;
  /** Aborting it stops the attempt as a shutdown would: the job goes back to the queue (`released`). */
  readonly signal?: AbortSignal;
  /** Where the worker's log lines go. Default nowhere. */
  readonly log?: Logger;
}

const OPTION_KEYS = ["attempt", "maxAttempts", "timeoutMs", "meta", "clock", "store", "signal", "log"];

const QUIET: Logger = {
  error: () => undefined,
  warn: () => undefined,
  info: () => undefined,
  debug: () => undefined,
  child: () => QUIET,
  isLevelEnabled: () => false,
};

/** The result type a worker's `processItem` declares. */
export type WorkerResult<W> = W extends AbstractQueueWorker<any, infer R> ? R : unknown;

/**
 * Runs one attempt of `worker` on `payload` and says how it ended, with no
 * database: the job goes into an `InMemoryJobStore` as a claimed attempt,
 * and the worker's real attempt executor runs it — `parse` (or the kind's
 * schema), `processItem` with a `JobContext` (`ctx.once`, `ctx.enqueue`,
 * `ctx.progress`, `ctx.transaction`, `ctx.log` and `ctx.updateMeta` work
 * against the store; the result's `logs` and `meta` show the last two),
 * the timeout, the lease, `isRetryable` and `handleFailure` — and records
 * the outcome as a run would, calling `onDead` once a death is recorded. The worker may
 * be built by hand or resolved from a container; its own store is not
 * used. The payload is not checked against the kind's schema first, so a
 * test can hand the worker one that its `parse` must refuse.
 *
 * @example
 * ```ts
 * const outcome = await runJob(new SendWelcomeWorker(new InMemoryJobStore(), createSilentLogger()), { userId: 42 });
 * assert.equal(outcome.status, "succeeded");
 * const last = await runJob(worker, { userId: 42 }, { attempt: 5, maxAttempts: 5 }); // the last attempt: a failure is dead
 * ```
 */
export async function runJob<W extends AbstractQueueWorker<any, any>>(
  worker: W,
  payload: PayloadOf<W["job"]>,
  options: RunJobOptions = {},
): Promise<RunJobResult<WorkerResult<W>>> {
  if (typeof options !== "object" || options === null) throw new ConfigError("options", "must be an object");
  rejectUnknownOptions("runJob", options, OPTION_KEYS);
  const clock = options.clock ?? worker.options.clock;
  const store = options.store ?? new InMemoryJobStore({ clock });
  if (!(store instanceof InMemoryJobStore)) throw new ConfigError("store", "must be an InMemoryJobStore");
  const workerOptions: ResolvedWorkerOptions = clock === worker.options.clock ? worker.options : Object.freeze({ ...worker.options, clock });
  const { queue, workerId } = worker;
  const log = (options.log ?? QUIET).child({ queue, workerId });
  const { onDead, ...hooks } = workerHooks(worker);
  const newJob = buildNewJob<unknown>(worker.job, payload, {
    ...(options.maxAttempts === undefined ? {} : { maxAttempts: options.maxAttempts }),
    ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
    ...(options.meta === undefined ? {} : { meta: options.meta }),
  });
  const claimed = await store.startJob({ job: newJob, workerId, leaseMs: workerOptions.leaseMs, attempt: options.attempt ?? 1 });

  // The run's own hub hears whether onDead failed; the log lines and the worker's listeners hear the rest.
  const heard = new WorkerEvents({ log });
  let onDeadError: Error | undefined;
  heard.on("job.onDeadFailed", (event) => (onDeadError = event.error));
  const events = new RunEvents([logLines(log, hooks.secretFields), worker.events, heard], { queue, workerId, clock });
  const pipeline = new AttemptPipeline({ store, log, options: workerOptions, workerId, queue, hooks, onDead, events });
  const { executor, recorder, deadHooks, leases } = pipeline;

  const attempt = executor.claimed(claimed, clock.now());
  const release = (): void => attempt.signal.abort(new ShutdownError("runJob's signal aborted"));
  if (options.signal?.aborted) release();
  options.signal?.addEventListener("abort", release, { once: true });
  pipeline.start();
  try {
    const { outcome, written } = await executor.run(attempt);
    await recorder.drain();
    await deadHooks.stop("when-empty");
    const job = await store.getJob({ id: claimed.id });
    // The worker's own writer stored the lines (redacted and trimmed) before the outcome; the test sees what it kept.
    const logs = (await store.listJobLogs({ jobId: claimed.id })).find((log) => log.attempt === claimed.attempt)?.lines ?? [];
    return toRunJobResult<WorkerResult<W>>(outcome, written, { job: job!, store, logs, endedAt: clock.now(), onDeadError });
  } finally {
    options.signal?.removeEventListener("abort", release);
    await deadHooks.stop("now");
    await leases.stop();
  }
}
