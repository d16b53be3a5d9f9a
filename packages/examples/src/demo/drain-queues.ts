import { setTimeout as delay } from "node:timers/promises";
import { type AbstractQueueWorker, type JobStore, type RunSummary } from "@stint/core";
import { coerceError } from "@stint/core/internal";

/** Options of {@link drainQueues}. */
export interface DrainOptions {
  /** Give up (stop claiming, let in-flight jobs finish) after this many ms. */
  readonly deadlineMs: number;
  /** How often to look for jobs that became due while no worker runs, in ms. Default 50. */
  readonly pollMs?: number;
  /** Stops early, like the deadline (SIGTERM, say). */
  readonly signal?: AbortSignal;
}

/** What the workers of one queue did while draining. */
export interface QueueDrain extends Pick<RunSummary, "queue" | "claimed" | "succeeded" | "retried" | "snoozed" | "dead" | "leaseLost"> {
  /** `start()` calls made. */
  readonly runs: number;
  /** Time spent inside `start()`, in ms. */
  readonly busyMs: number;
  /** The last infrastructure error a run stopped on, if any. */
  readonly lastError?: string;
}

/** What {@link drainQueues} found. */
export interface DrainResult {
  /** True when no job of the workers' queues was left `queued`, `running` or `failed`. */
  readonly drained: boolean;
  /** Jobs still active when it stopped (0 when drained; `NaN` when the database could not say). */
  readonly active: number;
  readonly durationMs: number;
  /** One entry per worker, in the workers' order. */
  readonly queues: readonly QueueDrain[];
}

/**
 * What draining needs of a worker: its queue and `start`. Every
 * `AbstractQueueWorker` subclass fits, whatever its payload type.
 */
export type DrainableWorker = Pick<AbstractQueueWorker<unknown>, "queue" | "start">;

type Counters = { -readonly [K in keyof QueueDrain]: QueueDrain[K] };

/**
 * Runs every worker until no job of their queues is active any more — the
 * "once" mode of a CronJob that must not leave retries behind.
 *
 * `start()` returns as soon as no job is due, but a failed job's retry is
 * scheduled in the future. So each queue gets its own loop: run the worker,
 * then poll `countByQueue` until a job of its queue is due again (run once
 * more) or no job of any queue is active (done). The queues run concurrently;
 * a chained job enqueued into a queue that had gone quiet is picked up by
 * the next poll. The deadline (or `signal`) bounds everything: workers stop
 * claiming, and in-flight jobs get the workers' `shutdownTimeoutMs`.
 *
 * @example
 * ```ts
 * const result = await drainQueues(resolveWorkers(app.container), store, { deadlineMs: 30_000 });
 * if (!result.drained) console.error(`${result.active} jobs are still active`);
 * ```
 */
export async function drainQueues(workers: readonly DrainableWorker[], store: JobStore, options: DrainOptions): Promise<DrainResult> {
  const started = Date.now();
  const pollMs = options.pollMs ?? 50;
  const timeout = AbortSignal.timeout(options.deadlineMs);
  const deadline = options.signal === undefined ? timeout : AbortSignal.any([timeout, options.signal]);
  const queues = workers.map((worker) => worker.queue);
  const state = { done: false, active: Number.NaN };

  const countActive = async (): Promise<{ active: number; due: ReadonlyMap<string, number> }> => {
    const counts = await store.countByQueue({ queues });
    const active = counts.reduce((sum, { counts: c }) => sum + c.queued + c.running + c.failed, 0);
    return { active, due: new Map(counts.map((entry) => [entry.queue, entry.due])) };
  };
  // The loops share a count in flight: one query answers every loop that asks meanwhile, so more
  // queues do not mean more polling. A count a little older than the question only delays a run by a poll.
  let inFlight: Promise<{ active: number; due: ReadonlyMap<string, number> }> | undefined;
  const activeJobs = (): Promise<{ active: number; due: ReadonlyMap<string, number> }> => {
    inFlight ??= countActive().finally(() => {
      inFlight = undefined;
    });
    return inFlight;
  };

  const drainOne = async (worker: DrainableWorker): Promise<QueueDrain> => {
    const totals: Counters = { queue: worker.queue, runs: 0, claimed: 0, succeeded: 0, retried: 0, snoozed: 0, dead: 0, leaseLost: 0, busyMs: 0 };
    for (;;) {
      add(totals, await worker.start({ signal: deadline }));
      // Wait until this queue has a due job again, or nothing is left anywhere.
      for (;;) {
        if (state.done || deadline.aborted) return totals;
        const found = await activeJobs().catch((thrown: unknown) => {
          totals.lastError = coerceError(thrown).message; // the database is away: keep polling until the deadline
          return undefined;
        });
        // Another queue's loop may have seen the end while this count was on its way: it is stale now.
        if (state.done) return totals;
        if (found !== undefined) {
          state.active = found.active;
          if (found.active === 0) {
            state.done = true;
            return totals;
          }
          if ((found.due.get(worker.queue) ?? 0) > 0) break;
        }
        await delay(pollMs, undefined, { signal: deadline }).catch(() => undefined);
      }
    }
  };

  const results = await Promise.all(workers.map(drainOne));
  // Counted once more after every loop has ended, so no count taken while another loop was finishing decides.
  state.active = (await countActive().catch(() => undefined))?.active ?? Number.NaN;
  return Object.freeze({
    drained: state.active === 0,
    active: state.active,
    durationMs: Date.now() - started,
    queues: Object.freeze(results.map((result) => Object.freeze(result))),
  });
}

function add(totals: Counters, summary: RunSummary): void {
  totals.runs += 1;
  totals.claimed += summary.claimed;
  totals.succeeded += summary.succeeded;
  totals.retried += summary.retried;
  totals.snoozed += summary.snoozed;
  totals.dead += summary.dead;
  totals.leaseLost += summary.leaseLost;
  totals.busyMs += summary.durationMs;
  if (summary.error !== undefined) totals.lastError = summary.error;
}
