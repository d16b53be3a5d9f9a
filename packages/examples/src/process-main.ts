import { ConfigError, ErrorCode, errorCodeOf, ExitCode } from "@stint/core";

/**
 * The exit code `stint run` ends with when a failure is thrown instead of
 * a run report: 78 (`ExitCode.Config`) for an invalid option, variable or
 * name (an unknown queue, a bad `STINT_*` value, no `DATABASE_URL`), 69
 * (`ExitCode.Infrastructure`) when the database cannot be reached, 1
 * (`ExitCode.Failure`) for anything else.
 *
 * @example
 * ```ts
 * exitCodeOfFailure(new ConfigError("queue", "no worker")); // 78
 * ```
 */
export function exitCodeOfFailure(thrown: unknown): ExitCode {
  switch (errorCodeOf(thrown)) {
    case ErrorCode.Config:
    case ErrorCode.InvalidName:
      return ExitCode.Config;
    case ErrorCode.Infrastructure:
      return ExitCode.Infrastructure;
    default:
      return ExitCode.Failure;
  }
}

/**
 * Runs an entry point's `main` and leaves the process with the exit code
 * it resolves to, or, when it throws, with the message on standard error
 * and the code of {@link exitCodeOfFailure}.
 *
 * @example
 * ```ts
 * exitWith(async () => (await runFromContainer(container, options)).exitCode);
 * ```
 */
export function exitWith(main: () => Promise<number>): void {
  main().then(
    (code) => {
      process.exitCode = code;
    },
    (error: unknown) => {
      process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
      process.exitCode = exitCodeOfFailure(error);
    },
  );
}

/**
 * `DATABASE_URL`, or a `ConfigError` when it is missing or blank.
 *
 * @example
 * ```ts
 * createApp({ connectionString: requiredDatabaseUrl(process.env), schema: "stint" });
 * ```
 */
export function requiredDatabaseUrl(env: NodeJS.ProcessEnv): string {
  const url = env["DATABASE_URL"];
  if (url === undefined || url.trim() === "") throw new ConfigError("DATABASE_URL", "set it to the database's URL, e.g. postgres://app@db:5432/app");
  return url;
}
