import { ErrorCode } from "../errors/error-codes";
import { errorCodeOf } from "../errors/stint-error";

/**
 * Why a run stopped: `drained` (no due job left), a budget (`max-jobs`,
 * `max-runtime`), a `signal`, `infrastructure` (the database stayed
 * unreachable or failed a statement) or `config` (the database is not set
 * up for this run: its schema is not migrated, the connection settings
 * lack a password; the summary's `error` says what to fix).
 */
export type StopReason = "drained" | "max-jobs" | "max-runtime" | "signal" | "infrastructure" | "config";

/** Codes of errors that no retry or restart fixes, only a change of setup: a run that meets one stops with `config`. */
const SETUP_CODES: ReadonlySet<string> = new Set([ErrorCode.SchemaMissing, ErrorCode.Config, ErrorCode.InvalidName]);

/**
 * The {@link StopReason} of a run that failed with `error`: `config` for a
 * setup problem (`STINT_SCHEMA_MISSING`, `STINT_CONFIG`,
 * `STINT_INVALID_NAME`), `infrastructure` for anything else.
 *
 * @example
 * ```ts
 * failureStopReason(new SchemaMissingError("…", { schema: "stint" })); // "config"
 * failureStopReason(new Error("connection terminated"));               // "infrastructure"
 * ```
 */
export function failureStopReason(error: unknown): "config" | "infrastructure" {
  const code = errorCodeOf(error);
  return code !== undefined && SETUP_CODES.has(code) ? "config" : "infrastructure";
}

/** How many attempts of a run (or of several runs, added up) ended each way. */
export interface RunTotals {
  readonly claimed: number;
  readonly succeeded: number;
  /** Failed attempts with a retry scheduled. */
  readonly retried: number;
  /** Attempts that asked to run later without spending an attempt. */
  readonly snoozed: number;
  readonly dead: number;
  /** Attempts whose lease ran out or was taken over before their outcome was recorded. */
  readonly leaseLost: number;
  /** Attempts an operator cancelled while this worker held them: their handlers were told to stop, and nothing of theirs was written. */
  readonly cancelled: number;
  /** Attempts whose outcome could not be written (the store kept failing); the job runs again once its lease lapses. */
  readonly writeFailed: number;
  /** Jobs given back to the queue at shutdown. */
  readonly released: number;
}

/**
 * What one `start()` did, frozen. `leaseLost` counts attempts stopped or
 * discarded because the worker no longer owned the job, `cancelled` those
 * an operator cancelled while they ran; `writeFailed` counts attempts whose
 * outcome the store could not be made to record.
 *
 * @example
 * ```ts
 * const summary = await worker.start();
 * console.log(`${summary.succeeded}/${summary.claimed} succeeded in ${summary.durationMs} ms`);
 * ```
 */
export interface RunSummary extends RunTotals {
  readonly queue: string;
  readonly workerId: string;
  readonly durationMs: number;
  readonly stoppedBecause: StopReason;
  /** The error that ended the run, when `stoppedBecause` is `infrastructure` or `config`. */
  readonly error?: string;
}

/** The mutable counters a run keeps before they are frozen into a {@link RunSummary}. */
export type RunCounters = { -readonly [K in keyof RunTotals]: RunTotals[K] };

/** Fresh zeroed counters. */
export function newRunCounters(): RunCounters {
  return { claimed: 0, succeeded: 0, retried: 0, snoozed: 0, dead: 0, leaseLost: 0, cancelled: 0, writeFailed: 0, released: 0 };
}
