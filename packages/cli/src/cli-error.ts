import { ExitCode } from "@stint/core";

/**
 * A failure the CLI reports as one line on stderr and an exit code: the
 * message is for the operator, so it says what is wrong and what to do.
 *
 * @example
 * ```ts
 * throw new CliError(ExitCode.Config, "--limit must be an integer from 1 to 10000, got \"abc\"");
 * ```
 */
export class CliError extends Error {
  readonly exitCode: ExitCode;
  /** Print the command's usage after the message (usage errors). */
  readonly showUsage: boolean;

  constructor(exitCode: ExitCode, message: string, options?: { cause?: unknown; showUsage?: boolean }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = "CliError";
    this.exitCode = exitCode;
    this.showUsage = options?.showUsage ?? false;
  }
}

/** A usage error (exit 2), printed with the command's usage. */
export function usageError(message: string): CliError {
  return new CliError(ExitCode.Usage, message, { showUsage: true });
}

/** A configuration error (exit 78). */
export function configError(message: string, cause?: unknown): CliError {
  return new CliError(ExitCode.Config, message, { cause });
}

/** True for a {@link CliError}, recognised by shape so that copies of this module agree. */
export function isCliError(thrown: unknown): thrown is CliError {
  return thrown instanceof Error && thrown.name === "CliError" && typeof (thrown as { exitCode?: unknown }).exitCode === "number";
}
