import { ExitCode } from "@stint/core";

/**
 * The stable code of each kind of failure the CLI reports: printed in the
 * JSON error document (`--json`) next to the message, so that scripts match
 * on the code, never on the text. Each goes with one exit code.
 *
 * | code | exit | meaning |
 * | --- | --- | --- |
 * | `STINT_USAGE` | 2 | the command line cannot be read (unknown command or option, missing argument) |
 * | `STINT_NOT_FOUND` | 3 | the job (or schedule) named does not exist |
 * | `STINT_WRONG_STATE` | 4 | the job exists, but the operation does not apply in its state; a schedule name the code declares |
 * | `STINT_JOB_DEAD` | 5 | `jobs wait`: the job is dead |
 * | `STINT_JOB_CANCELLED` | 6 | `jobs wait`: the job was cancelled |
 * | `STINT_TIMED_OUT` | 124 | `jobs wait`: the job did not finish within `--timeout` |
 * | `STINT_UNREACHABLE` | 69 | PostgreSQL cannot be reached, or failed in a way worth retrying |
 * | `STINT_CONFIG` | 78 | an invalid option value, environment variable, URL, schema or app module |
 * | `STINT_INTERRUPTED` | 130 | stopped by SIGINT/SIGTERM |
 * | `STINT_FAILURE` | 1 | anything else |
 */
export const CliErrorCode = Object.freeze({
  Usage: "STINT_USAGE",
  NotFound: "STINT_NOT_FOUND",
  WrongState: "STINT_WRONG_STATE",
  JobDead: "STINT_JOB_DEAD",
  JobCancelled: "STINT_JOB_CANCELLED",
  TimedOut: "STINT_TIMED_OUT",
  Unreachable: "STINT_UNREACHABLE",
  Config: "STINT_CONFIG",
  Interrupted: "STINT_INTERRUPTED",
  Failure: "STINT_FAILURE",
} as const);

/** One of the values of {@link CliErrorCode}. */
export type CliErrorCode = (typeof CliErrorCode)[keyof typeof CliErrorCode];

const CODE_OF_EXIT: Readonly<Record<ExitCode, CliErrorCode>> = Object.freeze({
  [ExitCode.Ok]: CliErrorCode.Failure,
  [ExitCode.Failure]: CliErrorCode.Failure,
  [ExitCode.Usage]: CliErrorCode.Usage,
  [ExitCode.NotFound]: CliErrorCode.NotFound,
  [ExitCode.WrongState]: CliErrorCode.WrongState,
  [ExitCode.JobDead]: CliErrorCode.JobDead,
  [ExitCode.JobCancelled]: CliErrorCode.JobCancelled,
  [ExitCode.TimedOut]: CliErrorCode.TimedOut,
  [ExitCode.Infrastructure]: CliErrorCode.Unreachable,
  [ExitCode.Config]: CliErrorCode.Config,
  [ExitCode.Interrupted]: CliErrorCode.Interrupted,
});

/**
 * A failure the CLI reports as one line on stderr (or, with `--json`, one
 * JSON document `{"error": {"code", "message"}}`) and an exit code: the
 * message is for the operator, so it says what is wrong and what to do.
 * The code follows from the exit code unless given.
 *
 * @example
 * ```ts
 * throw new CliError(ExitCode.Config, "--limit must be an integer from 1 to 10000, got \"abc\"");
 * // code: "STINT_CONFIG", exit 78
 * ```
 */
export class CliError extends Error {
  readonly exitCode: ExitCode;
  /** The stable code of this kind of failure (see {@link CliErrorCode}). */
  readonly code: CliErrorCode;
  /** Print the command's usage after the message (usage errors, text output only). */
  readonly showUsage: boolean;

  constructor(exitCode: ExitCode, message: string, options?: { cause?: unknown; showUsage?: boolean; code?: CliErrorCode }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = "CliError";
    this.exitCode = exitCode;
    this.code = options?.code ?? CODE_OF_EXIT[exitCode];
    this.showUsage = options?.showUsage ?? false;
  }
}

/** A usage error (exit 2, `STINT_USAGE`), printed with the command's usage. */
export function usageError(message: string): CliError {
  return new CliError(ExitCode.Usage, message, { showUsage: true });
}

/** A configuration error (exit 78, `STINT_CONFIG`). */
export function configError(message: string, cause?: unknown): CliError {
  return new CliError(ExitCode.Config, message, { cause });
}

/** The job or schedule a command names does not exist (exit 3, `STINT_NOT_FOUND`). */
export function notFoundError(message: string): CliError {
  return new CliError(ExitCode.NotFound, message);
}

/** The job exists but the operation does not apply to it in its state (exit 4, `STINT_WRONG_STATE`). */
export function wrongStateError(message: string): CliError {
  return new CliError(ExitCode.WrongState, message);
}

/** No job `id` in `schema` (exit 3, `STINT_NOT_FOUND`). */
export function jobNotFound(id: string, schema: string): CliError {
  return notFoundError(`job ${id} not found in schema "${schema}"`);
}

/** True for a {@link CliError}, recognised by shape so that copies of this module agree. */
export function isCliError(thrown: unknown): thrown is CliError {
  return thrown instanceof Error && thrown.name === "CliError" && typeof (thrown as { exitCode?: unknown }).exitCode === "number";
}
