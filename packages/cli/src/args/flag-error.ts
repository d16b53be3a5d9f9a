import { ErrorCode, hasErrorCode } from "@stint/core";
import { configError } from "../cli-error";

/**
 * What a command throws for an error of the library: a `ConfigError` that
 * names an option (`cron`, `maxAttempts`) becomes a configuration error
 * (exit 78) naming the command's flag for it (`--cron`, `--max-attempts`);
 * anything else is returned as it is.
 *
 * @example
 * ```ts
 * try {
 *   return buildNewJob(kind, payload, options);
 * } catch (thrown) {
 *   throw asFlagError(thrown, { maxAttempts: "--max-attempts" });
 * }
 * ```
 */
export function asFlagError(thrown: unknown, flags: Readonly<Record<string, string>>): unknown {
  if (!hasErrorCode(thrown, ErrorCode.Config)) return thrown;
  const option = (thrown as { option?: string }).option ?? "";
  const problem = (thrown as Error).message.replace(/^Invalid option `[^`]*`: /, "");
  return configError(`${flags[option] ?? option} ${problem}`, thrown);
}
