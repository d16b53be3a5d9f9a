import { ErrorCode } from "../errors/error-codes";
import { JobTimeoutError, ParseError } from "../errors/job-errors";
import { coerceError } from "../errors/coerce-error";
import { hasErrorCode } from "../errors/stint-error";
import type { Clock } from "../time/clock";
import type { FailureDecision, JobContext } from "./job-context";
import { raceAbort } from "./race-abort";

/** The hooks a run calls for each job, bound to one worker. */
export interface JobHooks<T> {
  parse(payload: unknown): T | Promise<T>;
  process(item: T, ctx: JobContext): Promise<unknown>;
  decide(item: T, error: unknown, ctx: JobContext): FailureDecision | Promise<FailureDecision>;
  /** The job kind's `secretFields`: payload fields kept out of the job's log lines and `last_error`. */
  readonly secretFields?: readonly string[];
}

/** How one attempt ended, before anything is written. */
export type AttemptOutcome<T> =
  | { readonly kind: "succeeded"; readonly result: unknown; readonly durationMs: number }
  | { readonly kind: "unparseable"; readonly error: ParseError; readonly durationMs: number }
  | { readonly kind: "failed"; readonly item: T; readonly error: unknown; readonly durationMs: number }
  /** The lease was lost or the worker is shutting down: `reason` says which. */
  | { readonly kind: "interrupted"; readonly reason: Error; readonly durationMs: number }
  /** The lease lapsed before the attempt could start: nothing ran. */
  | { readonly kind: "not-started"; readonly durationMs: number };

/**
 * Runs one attempt: parse, then process while racing the attempt's abort
 * signal, which fires on its timeout, on a lost lease or at shutdown. A
 * handler that ignores the signal is left behind; its late result is dropped.
 */
export async function runAttempt<T>(
  hooks: JobHooks<T>,
  ctx: JobContext,
  controller: AbortController,
  clock: Clock,
): Promise<AttemptOutcome<T>> {
  const started = clock.now();
  const elapsed = (): number => clock.now() - started;
  let item: T;
  try {
    item = await hooks.parse(ctx.job.payload);
  } catch (thrown) {
    const cause = coerceError(thrown);
    const error = hasErrorCode(cause, ErrorCode.Parse)
      ? (cause as ParseError)
      : new ParseError(`invalid payload: ${cause.message}`, { cause });
    return { kind: "unparseable", error, durationMs: elapsed() };
  }

  const timeoutMs = ctx.job.timeoutMs;
  const timer =
    timeoutMs === null ? undefined : setTimeout(() => controller.abort(new JobTimeoutError(timeoutMs)), timeoutMs);
  try {
    const result = await raceAbort(hooks.process(item, ctx), controller.signal);
    return { kind: "succeeded", result, durationMs: elapsed() };
  } catch (thrown) {
    const aborted = controller.signal.aborted ? coerceError(controller.signal.reason) : undefined;
    if (aborted !== undefined && !hasErrorCode(aborted, ErrorCode.Timeout)) {
      return { kind: "interrupted", reason: aborted, durationMs: elapsed() };
    }
    return { kind: "failed", item, error: aborted ?? thrown, durationMs: elapsed() };
  } finally {
    if (timer !== undefined) clearTimeout(timer);
  }
}
