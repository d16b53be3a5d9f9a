import type { CliError } from "./cli-error";
import type { Command } from "./command";
import { shortUsage } from "./help";
import type { CliIo } from "./io";

/**
 * Prints a failure on stderr: `stint: <message>` (and the usage after a
 * usage error), or with `--json` one JSON document on one line,
 * `{"error":{"code":"STINT_NOT_FOUND","message":"job 7 not found in schema \"stint\""}}`.
 * The exit code is the same either way.
 *
 * @example
 * ```ts
 * reportFailure(io, explainFailure(thrown, { schema }), command, jsonRequested(argv));
 * ```
 */
export function reportFailure(io: CliIo, failure: CliError, command: Command | undefined, json: boolean): void {
  if (json) {
    io.stderr.write(`${JSON.stringify({ error: { code: failure.code, message: failure.message } })}\n`);
    return;
  }
  io.stderr.write(`stint: ${failure.message}\n`);
  if (failure.showUsage) io.stderr.write(`${shortUsage(command)}\n`);
}

/**
 * True when the command line asks for JSON: `--json` appears before any
 * `--`. Read from the raw arguments so that a command line that cannot be
 * parsed still gets its error as JSON.
 */
export function jsonRequested(argv: readonly string[]): boolean {
  const end = argv.indexOf("--");
  return (end === -1 ? argv : argv.slice(0, end)).includes("--json");
}
