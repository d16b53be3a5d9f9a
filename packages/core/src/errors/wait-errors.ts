import type { JobRecord } from "../job/job-record";
import { ErrorCode } from "./error-codes";
import { StintError } from "./stint-error";

/**
 * A job someone waited for (`client.waitFor`) ended without succeeding: it
 * is `dead` (gave up) or `cancelled`. Carries what the job row says about
 * why, so the caller need not read it again.
 *
 * @example
 * ```ts
 * try {
 *   await client.waitFor(job);
 * } catch (error) {
 *   if (hasErrorCode(error, ErrorCode.JobFailed)) console.log((error as JobFailedError).state, (error as JobFailedError).lastError);
 * }
 * ```
 */
export class JobFailedError extends StintError {
  readonly jobId: string;
  readonly queue: string;
  /** `dead` (no attempt left, or a permanent error) or `cancelled` (by an operator). */
  readonly state: "dead" | "cancelled";
  /** Attempts the job made, and the most it could make. */
  readonly attempts: number;
  readonly maxAttempts: number;
  /** The job's last error as stored (stack and causes, capped), or `null` (a job cancelled before it ran). */
  readonly lastError: string | null;
  /** The stable code of that error (`STINT_PERMANENT`, `STINT_PARSE`, …), or `null`. */
  readonly lastErrorCode: string | null;

  constructor(job: JobRecord & { readonly state: "dead" | "cancelled" }) {
    super(ErrorCode.JobFailed, failureMessage(job));
    this.jobId = job.id;
    this.queue = job.queue;
    this.state = job.state;
    this.attempts = job.attempts;
    this.maxAttempts = job.maxAttempts;
    this.lastError = job.lastError;
    this.lastErrorCode = job.errorCode;
  }
}

/**
 * A wait (`client.waitFor` with `timeoutMs`) ran out before the job
 * finished. The job itself is untouched and may still finish.
 *
 * @example
 * ```ts
 * // WaitTimeoutError: job 812 did not finish within 30000 ms (it was running)
 * ```
 */
export class WaitTimeoutError extends StintError {
  readonly jobId: string;
  readonly timeoutMs: number;
  /** The job's state when it was last read, or `undefined` when no read finished in time. */
  readonly lastState: string | undefined;

  constructor(jobId: string, timeoutMs: number, lastState: string | undefined) {
    const seen = lastState === undefined ? "" : ` (it was ${lastState})`;
    super(ErrorCode.WaitTimeout, `job ${jobId} did not finish within ${timeoutMs} ms${seen}`);
    this.jobId = jobId;
    this.timeoutMs = timeoutMs;
    this.lastState = lastState;
  }
}

/**
 * The job named does not exist: it never did, or retention deleted it
 * after it finished.
 *
 * @example
 * ```ts
 * // JobNotFoundError: job 812 does not exist
 * ```
 */
export class JobNotFoundError extends StintError {
  readonly jobId: string;

  constructor(jobId: string) {
    super(ErrorCode.JobNotFound, `job ${jobId} does not exist`);
    this.jobId = jobId;
  }
}

function failureMessage(job: JobRecord & { readonly state: "dead" | "cancelled" }): string {
  const what = `job ${job.id} (${job.queue})`;
  if (job.state === "cancelled") return `${what} was cancelled after ${job.attempts} of ${job.maxAttempts} attempts`;
  const reason = job.lastError === null ? "" : `: ${job.lastError.split("\n", 1)[0]}`;
  const code = job.errorCode === null ? "" : ` [${job.errorCode}]`;
  return `${what} is dead after ${job.attempts} of ${job.maxAttempts} attempts${code}${reason}`;
}
