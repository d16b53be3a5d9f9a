/**
 * Process exit codes of a run (from the CLI or `exitCodeFor`), stable for
 * Kubernetes Jobs and shell scripts. They follow `sysexits.h` where one fits.
 *
 * | code | meaning |
 * | --- | --- |
 * | 0 | drained, or a budget (`--max-jobs`, `--max-runtime`) was reached; loop mode stopped by a signal |
 * | 1 | an unexpected error |
 * | 69 | infrastructure: the database stayed unreachable |
 * | 78 | configuration: an invalid option, an unknown queue, a missing schema |
 * | 130 | once mode interrupted by SIGTERM/SIGINT (in-flight jobs finished or were given back) |
 */
export const ExitCode = Object.freeze({
  Ok: 0,
  Failure: 1,
  Usage: 2,
  Infrastructure: 69,
  Config: 78,
  Interrupted: 130,
} as const);

/** One of the values of {@link ExitCode}. */
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];
