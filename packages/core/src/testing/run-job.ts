import { ShutdownError } from "../errors/job-errors";
import type { PayloadOf } from "../job/job-definition";
import type { JsonObject } from "../job/json-types";
import type { Logger } from "../logging/logger";
import type { Clock } from "../time/clock";
import type { AbstractQueueWorker } from "../worker/abstract-queue-worker";
import type { InMemoryJobStore } from "./memory/in-memory-job-store";
import type { RunJobResult } from "./run-job-result";
import { WorkerTestRun } from "./worker-test-run";

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
  const run = new WorkerTestRun(worker, options, "runJob");
  const { executor } = run.pipeline;
  const claimed = await run.startJob(payload);
  const attempt = executor.claimed(claimed, (options.clock ?? worker.options.clock).now());
  const release = (): void => attempt.signal.abort(new ShutdownError("runJob's signal aborted"));
  if (options.signal?.aborted) release();
  options.signal?.addEventListener("abort", release, { once: true });
  run.pipeline.start();
  try {
    const result = await executor.run(attempt);
    await run.settle();
    return await run.resultOf<WorkerResult<W>>(claimed, result);
  } finally {
    options.signal?.removeEventListener("abort", release);
    await run.stop();
  }
}
