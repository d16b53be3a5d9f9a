import type { RunSummary, RunTotals, StopReason } from "../worker/run-summary";
import { ExitCode } from "./exit-codes";

/**
 * What `runWorkers` did: one summary per worker, their totals, what
 * maintenance ran first, and the exit code a process should end with.
 * Printed by the CLI as one JSON line.
 */
export interface RunReport {
  readonly mode: "once" | "loop";
  readonly exitCode: ExitCode;
  /** The most significant stop reason over all workers. */
  readonly stoppedBecause: StopReason;
  /** The workers' counts added up. */
  readonly totals: RunTotals;
  readonly workers: readonly RunSummary[];
  /** What ran before the workers (lease rescue, schedules), one line each. */
  readonly maintenance: readonly string[];
  readonly durationMs: number;
  readonly error?: string;
}

const SEVERITY: readonly StopReason[] = ["drained", "max-jobs", "max-runtime", "signal", "infrastructure", "config"];

/**
 * Folds worker summaries into a frozen {@link RunReport} with its exit
 * code: 78 when a worker (or the preparation, per `preparationFailure`)
 * stopped for a setup problem (`config`), 69 for an infrastructure one,
 * 130 for a once run stopped by a signal, 0 otherwise.
 *
 * @example
 * ```ts
 * const summary = await worker.start();
 * process.exitCode = summarizeRun({ mode: "once", summaries: [summary], durationMs: summary.durationMs, maintenance: [] }).exitCode;
 * ```
 */
export function summarizeRun(input: {
  readonly mode: "once" | "loop";
  readonly summaries: readonly RunSummary[];
  readonly durationMs: number;
  readonly maintenance: readonly string[];
  readonly preparationError?: string;
  /** What kind of problem `preparationError` is; default `infrastructure`. */
  readonly preparationFailure?: "config" | "infrastructure";
}): RunReport {
  const { summaries, mode } = input;
  const sum = (field: keyof RunTotals): number => summaries.reduce((total, summary) => total + summary[field], 0);
  const stoppedBecause = summaries.reduce<StopReason>(
    (worst, summary) => (SEVERITY.indexOf(summary.stoppedBecause) > SEVERITY.indexOf(worst) ? summary.stoppedBecause : worst),
    "drained",
  );
  const error = input.preparationError ?? summaries.find((summary) => summary.error !== undefined)?.error;
  return Object.freeze({
    mode,
    exitCode: exitCodeFor(mode, stoppedBecause, input.preparationError === undefined ? undefined : (input.preparationFailure ?? "infrastructure")),
    stoppedBecause,
    totals: Object.freeze({
      claimed: sum("claimed"),
      succeeded: sum("succeeded"),
      retried: sum("retried"),
      snoozed: sum("snoozed"),
      dead: sum("dead"),
      leaseLost: sum("leaseLost"),
      cancelled: sum("cancelled"),
      writeFailed: sum("writeFailed"),
      released: sum("released"),
    }),
    workers: Object.freeze([...summaries]),
    maintenance: Object.freeze([...input.maintenance]),
    durationMs: input.durationMs,
    ...(error === undefined ? {} : { error }),
  });
}

function exitCodeFor(mode: "once" | "loop", stoppedBecause: StopReason, preparationFailure: "config" | "infrastructure" | undefined): ExitCode {
  if (stoppedBecause === "config" || preparationFailure === "config") return ExitCode.Config;
  if (stoppedBecause === "infrastructure" || preparationFailure === "infrastructure") return ExitCode.Infrastructure;
  if (stoppedBecause === "signal" && mode === "once") return ExitCode.Interrupted;
  return ExitCode.Ok;
}
