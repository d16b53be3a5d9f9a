/**
 * Process exit codes of a run (from the CLI or `exitCodeFor`) and of the
 * `stint` commands, stable for Kubernetes Jobs and shell scripts. They
 * follow `sysexits.h` where one fits.
 *
 * | code | meaning |
 * | --- | --- |
 * | 0 | drained, or a budget (`--max-jobs`, `--max-runtime`) was reached; loop mode stopped by a signal; a command did what it was asked |
 * | 1 | an unexpected error; `stint doctor` found a problem |
 * | 2 | usage: an unknown command or option, a missing or extra argument |
 * | 3 | not found: the job a command names does not exist (`jobs show`, `retry`, `cancel`), nor the schedule (`schedules remove`) |
 * | 4 | wrong state: the job exists but the operation does not apply to it (`retry` a running job, `cancel` a finished one); `schedules add` of a name the code declares |
 * | 5 | `jobs wait`: the job is dead (it gave up) |
 * | 6 | `jobs wait`: the job was cancelled |
 * | 124 | `jobs wait`: the job did not finish within `--timeout` (as `timeout(1)` exits) |
 * | 69 | infrastructure: the database stayed unreachable |
 * | 78 | configuration: an invalid option or environment variable, an unknown queue, a missing schema, a missing password |
 * | 130 | once mode (or a long command) interrupted by SIGTERM/SIGINT (in-flight jobs finished or were given back) |
 *
 * @example
 * ```sh
 * stint cancel 812; case $? in 0|4) ;; 3) echo "no job 812" ;; *) exit 1 ;; esac
 * ```
 */
export const ExitCode = Object.freeze({
  /** Done: drained, a budget reached, or the command did what it was asked. */
  Ok: 0,
  /** An unexpected error, or `stint doctor` found a problem. */
  Failure: 1,
  /** A command line the CLI cannot read. */
  Usage: 2,
  /** The job (or other named thing) does not exist. */
  NotFound: 3,
  /** The job exists but is in a state the operation does not apply to. */
  WrongState: 4,
  /** The job waited for is dead. */
  JobDead: 5,
  /** The job waited for was cancelled. */
  JobCancelled: 6,
  /** The wait ran out before the job finished (the exit code of `timeout(1)`). */
  TimedOut: 124,
  /** The database stayed unreachable (`EX_UNAVAILABLE`). */
  Infrastructure: 69,
  /** An invalid option, environment variable or schema, a schema not migrated, a missing password (`EX_CONFIG`). */
  Config: 78,
  /** Stopped by SIGTERM/SIGINT before the work was done (128 + SIGINT). */
  Interrupted: 130,
} as const);

/** One of the values of {@link ExitCode}. */
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];
