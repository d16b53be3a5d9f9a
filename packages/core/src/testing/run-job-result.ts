import { coerceError } from "../errors/coerce-error";
import { CancelledError } from "../errors/job-errors";
import type { JobLogLine } from "../job/job-log";
import type { JobRecord } from "../job/job-record";
import type { JsonObject } from "../job/json-types";
import type { AttemptOutcome, WriteResult } from "../worker/attempt-outcome";
import type { InMemoryJobStore } from "./memory/in-memory-job-store";

/** What every {@link RunJobResult} carries. */
export interface RunJobFacts {
  /** The job as the store holds it after the attempt (its `lastError`, `progress`, `result`, …). */
  readonly job: JobRecord;
  /** The store the attempt ran against: look in it for the jobs the handler enqueued. */
  readonly store: InMemoryJobStore;
  /** How long the attempt took, on the worker's clock. */
  readonly durationMs: number;
  /**
   * Whether the store took the outcome: false when the fenced write found
   * the attempt no longer the worker's (as `leaseLost` counts it in a run's
   * summary), or the job was cancelled (as `cancelled` counts it).
   */
  readonly recorded: boolean;
  /**
   * The lines the handler wrote with `ctx.log`, oldest first, as the worker
   * stores them: each with its `message`, `fields` and `at` (the run's
   * clock), the job's secret values redacted, and only the newest
   * `MAX_JOB_LOG_LINES` within `MAX_JOB_LOG_BYTES` kept.
   */
  readonly logs: readonly JobLogLine[];
  /** The job's `meta` after the attempt, with the handler's `ctx.updateMeta` merges (`{}` when none). */
  readonly meta: JsonObject;
}

/**
 * How one attempt run by `runJob` ended, as the worker's hooks decided it:
 *
 * - `succeeded` — `processItem` resolved to `result`;
 * - `retry` — it failed and the job runs again at `runAt` (`delayMs` after
 *   the attempt ended; `error` is what it threw);
 * - `snoozed` — it asked to run again at `runAt` without spending the attempt;
 * - `dead` — no attempt follows: a payload `parse` (or the kind's schema)
 *   refused, a permanent error, the last attempt failing, or
 *   `handleFailure` said so. `onDeadError` is what the worker's `onDead`
 *   threw, when it did (it ran once the death was recorded);
 * - `lease-lost` — the lease lapsed while the handler ran (the clock moved
 *   past it without a heartbeat getting through);
 * - `cancelled` — the job was cancelled while the attempt held it (the
 *   handler cancelled its own job, say): the handler was told to stop
 *   (`error` is the `CancelledError` its signal aborted with), or what it
 *   returned was discarded;
 * - `released` — the run's `signal` aborted and the job went back to the
 *   queue without spending the attempt, as at a shutdown.
 *
 * @example
 * ```ts
 * const outcome = await runJob(worker, { invoiceId: 812 });
 * if (outcome.status === "retry") console.log(`again at ${outcome.runAt.toISOString()}: ${outcome.error.message}`);
 * ```
 */
export type RunJobResult<R = unknown> = RunJobFacts &
  (
    | { readonly status: "succeeded"; readonly result: R }
    | { readonly status: "retry"; readonly runAt: Date; readonly delayMs: number; readonly error: Error }
    | { readonly status: "snoozed"; readonly runAt: Date; readonly delayMs: number }
    | { readonly status: "dead"; readonly error: Error; readonly onDeadError: Error | undefined }
    | { readonly status: "lease-lost"; readonly error: Error }
    | { readonly status: "cancelled"; readonly error: Error }
    | { readonly status: "released" }
  );

/** The result of an attempt from the executor's outcome, the stored job and what else the run saw. */
export function toRunJobResult<R>(
  outcome: AttemptOutcome,
  written: WriteResult,
  facts: Omit<RunJobFacts, "recorded" | "durationMs" | "meta"> & { readonly endedAt: number; readonly onDeadError: Error | undefined },
): RunJobResult<R> {
  const { job, store, logs, endedAt } = facts;
  const common: RunJobFacts = { job, store, durationMs: outcome.durationMs, recorded: written === "applied", logs, meta: job.meta };
  const runAt = (delayMs: number): Date => (written === "applied" ? job.runAt : new Date(endedAt + delayMs));
  if (written === "cancelled" && outcome.kind !== "cancelled") {
    return Object.freeze({
      ...common,
      status: "cancelled",
      error: new CancelledError(`job ${job.id} was cancelled while it ran; its ${outcome.kind} outcome is discarded`),
    });
  }
  switch (outcome.kind) {
    case "succeeded":
      return Object.freeze({ ...common, status: "succeeded", result: outcome.result as R });
    case "retry":
      return Object.freeze({ ...common, status: "retry", runAt: runAt(outcome.delayMs), delayMs: outcome.delayMs, error: coerceError(outcome.error) });
    case "snoozed":
      return Object.freeze({ ...common, status: "snoozed", runAt: runAt(outcome.delayMs), delayMs: outcome.delayMs });
    case "dead":
      return Object.freeze({ ...common, status: "dead", error: coerceError(outcome.error), onDeadError: facts.onDeadError });
    case "lease-lost":
      return Object.freeze({ ...common, status: "lease-lost", error: outcome.error });
    case "cancelled":
      return Object.freeze({ ...common, status: "cancelled", error: outcome.error });
    case "released":
      return Object.freeze({ ...common, status: "released" });
  }
}
