/**
 * Every stable error code stint produces. Codes never change meaning once
 * released: match on them, not on messages or classes.
 *
 * @example
 * ```ts
 * if (hasErrorCode(err, ErrorCode.Config)) process.exitCode = 78;
 * ```
 */
export const ErrorCode = {
  /** A handler said the job can never succeed: dead without further attempts. */
  Permanent: "STINT_PERMANENT",
  /** A handler asked for another attempt, optionally after a given delay. */
  Retryable: "STINT_RETRYABLE",
  /** A handler asked to run the job later without spending an attempt. */
  Snooze: "STINT_SNOOZE",
  /** The payload did not pass the worker's `parse`: dead at once. */
  Parse: "STINT_PARSE",
  /** The attempt ran past its `timeoutMs`. */
  Timeout: "STINT_TIMEOUT",
  /** The worker no longer owns the job: its outcome was discarded. */
  LeaseLost: "STINT_LEASE_LOST",
  /** The worker is shutting down and gave the job back. */
  Shutdown: "STINT_SHUTDOWN",
  /** A worker hook (`handleFailure`) threw or answered something unusable: the job is dead with that reason. */
  HookFailed: "STINT_HOOK_FAILED",
  /** An option or registration is invalid (a programmer error). */
  Config: "STINT_CONFIG",
  /** A payload cannot be stored (not JSON-serialisable, too large). */
  Payload: "STINT_PAYLOAD",
  /** A name (schema, queue) is not acceptable. */
  InvalidName: "STINT_INVALID_NAME",
  /** The database or the network failed; trying again may work. */
  Infrastructure: "STINT_INFRASTRUCTURE",
  /** The database refused or failed a statement for a reason retrying will not fix. */
  Database: "STINT_DATABASE",
  /** stint's schema, or a table or function of it, does not exist: its migrations have not run (or not all of them). */
  SchemaMissing: "STINT_SCHEMA_MISSING",
  /** The worker's process stopped during the attempt (found by lease rescue). */
  WorkerDied: "STINT_WORKER_DIED",
  /** An operator cancelled the job: its `error_code`, and the reason a running attempt's `ctx.signal` aborts with. */
  Cancelled: "STINT_CANCELLED",
  /** A job was not started by its `startBy` (or within its `expireInMs`): it was cancelled without running. Its `error_code`. */
  Expired: "STINT_EXPIRED",
  /** A job someone waited for (`client.waitFor`) is dead or cancelled: it will not succeed. */
  JobFailed: "STINT_JOB_FAILED",
  /** A job someone waited for did not finish within the wait's `timeoutMs`. */
  WaitTimeout: "STINT_WAIT_TIMEOUT",
  /** The job named does not exist (never did, or retention deleted it). */
  JobNotFound: "STINT_JOB_NOT_FOUND",
  /** A schedule's name is held by a schedule of the other origin (declared in code, or created at run time). */
  ScheduleConflict: "STINT_SCHEDULE_CONFLICT",
  /** A workflow cannot be enqueued as given (a cycle, an unknown step name, too many steps …): nothing was written. */
  WorkflowInvalid: "STINT_WORKFLOW_INVALID",
  /** A workflow someone waited for will not succeed: a step of it is dead or cancelled, or it was cancelled. */
  WorkflowFailed: "STINT_WORKFLOW_FAILED",
  /** The workflow named does not exist (never did, or retention deleted it). */
  WorkflowNotFound: "STINT_WORKFLOW_NOT_FOUND",
  /** A workflow step was cancelled because a step it waits for ended dead or cancelled. Its `error_code`. */
  DependencyFailed: "STINT_DEPENDENCY_FAILED",
  /** Anything thrown that carries no stint code. */
  Unknown: "STINT_UNKNOWN",
} as const;

/** One of the values of {@link ErrorCode}. */
export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];
