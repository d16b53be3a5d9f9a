import { ErrorCode } from "./error-codes";
import { numberOption } from "../validation/option-checks";
import { StintError } from "./stint-error";

/**
 * Thrown by a handler when the job can never succeed (bad data, a refused
 * request): the job goes to `dead` at once, whatever attempts remain.
 *
 * @example
 * ```ts
 * if (!invoice) throw new PermanentError(`invoice ${id} does not exist`);
 * ```
 */
export class PermanentError extends StintError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(ErrorCode.Permanent, message, options);
  }
}

/**
 * Thrown by a handler to ask for another attempt. With `retryAfterMs` the
 * next attempt runs after that delay instead of the backoff policy's.
 *
 * @example
 * ```ts
 * throw new RetryableError("rate limited", { retryAfterMs: 30_000 });
 * ```
 */
export class RetryableError extends StintError {
  readonly retryAfterMs: number | undefined;

  /** Throws `ConfigError` for a `retryAfterMs` that is not a finite number of ms ≥ 0. */
  constructor(message: string, options?: { cause?: unknown; retryAfterMs?: number }) {
    super(ErrorCode.Retryable, message, options);
    this.retryAfterMs = options?.retryAfterMs === undefined ? undefined : checkDelay("retryAfterMs", options.retryAfterMs);
  }
}

/**
 * Thrown (through {@link snooze}) to run the job again after `delayMs`
 * without spending an attempt: the job is not failing, it is early.
 *
 * @example
 * ```ts
 * if (!report.ready) throw snooze(60_000);
 * ```
 */
export class SnoozeError extends StintError {
  readonly delayMs: number;

  /** Throws `ConfigError` for a `delayMs` that is not a finite number of ms ≥ 0. */
  constructor(delayMs: number) {
    super(ErrorCode.Snooze, `snoozed for ${delayMs} ms`);
    this.delayMs = checkDelay("delayMs", delayMs);
  }
}

/** The payload failed the worker's `parse`; the job is dead at once. */
export class ParseError extends StintError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(ErrorCode.Parse, message, options);
  }
}

/** An attempt ran longer than its `timeoutMs`; retried like any transient error. */
export class JobTimeoutError extends StintError {
  readonly timeoutMs: number;

  constructor(timeoutMs: number) {
    super(ErrorCode.Timeout, `job timed out after ${timeoutMs} ms`);
    this.timeoutMs = timeoutMs;
  }
}

/** The worker lost the job's lease; another worker may now own it. */
export class LeaseLostError extends StintError {
  constructor(message = "the job's lease was lost; its outcome is discarded") {
    super(ErrorCode.LeaseLost, message);
  }
}

/**
 * An operator cancelled the job while this worker held it (`stint cancel`,
 * the dashboard, `store.cancelJob`): the attempt's `ctx.signal` aborts with
 * it. The job is `cancelled` already; the attempt writes nothing more, is
 * not retried, and `onDead` is not called.
 *
 * @example
 * ```ts
 * if (hasErrorCode(ctx.signal.reason, ErrorCode.Cancelled)) await rollBackPartialExport(item);
 * ```
 */
export class CancelledError extends StintError {
  constructor(message = "the job was cancelled; its handler must stop") {
    super(ErrorCode.Cancelled, message);
  }
}

/** The worker is shutting down; the job was given back to the queue. */
export class ShutdownError extends StintError {
  constructor(message = "the worker is shutting down") {
    super(ErrorCode.Shutdown, message);
  }
}

/**
 * A worker's own hook failed while deciding a job's fate (`handleFailure`
 * threw, or returned a delay that is not a finite number of ms ≥ 0). The
 * job is dead with this error; `cause` is the failure being handled.
 */
export class HookError extends StintError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(ErrorCode.HookFailed, message, options);
  }
}

/** A delay a handler asked for: a finite number of ms from 0 up, rounded to whole ms. */
function checkDelay(option: string, delayMs: number): number {
  return Math.round(numberOption(option, delayMs, 0, Number.MAX_SAFE_INTEGER));
}

/**
 * The error a dead job's last attempt ended with, rebuilt from what the
 * database recorded with the death: `code` is its `error_code` (codes stint
 * does not know read as `STINT_UNKNOWN`), `message` the first line of its
 * `last_error` (`PermanentError: invoice 812 does not exist`) and `stack`
 * the whole text, causes included. `onDead` gets one when the process that
 * runs the hook is not the one that recorded the death (the lease rescue,
 * another worker, a restarted pod).
 *
 * @example
 * ```ts
 * if (hasErrorCode(error, ErrorCode.WorkerDied)) alert(`a worker died on job ${job.id}`);
 * ```
 */
export class RecordedError extends StintError {
  /** The recorded `last_error` text (empty when none was recorded). */
  readonly recorded: string;

  constructor(code: string | null, recorded: string | null) {
    const text = recorded ?? "";
    super(knownCode(code), text.split("\n", 1)[0] || "the job is dead (no error was recorded)");
    this.recorded = text;
    if (text !== "") this.stack = text;
  }
}

/** `code` when it is one of stint's codes, else `STINT_UNKNOWN`. */
function knownCode(code: string | null): ErrorCode {
  return (Object.values(ErrorCode) as string[]).includes(code ?? "") ? (code as ErrorCode) : ErrorCode.Unknown;
}
