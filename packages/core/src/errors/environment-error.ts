import { ErrorCode } from "./error-codes";
import { StintError } from "./stint-error";

/**
 * An environment variable (or the `stint run` flag that stands in for it)
 * holds a value stint cannot use. Thrown when a process starts (building
 * its logger, reading its settings); the message names the variable or
 * flag, what it accepts and what it got. Its code is `STINT_CONFIG`, so it
 * is handled like any configuration error.
 *
 * @example
 * ```ts
 * new EnvironmentError("STINT_LOG_LEVEL", "must be one of error, warn, info, debug", "verbose");
 * // message: 'STINT_LOG_LEVEL must be one of error, warn, info, debug; got "verbose"'
 * ```
 */
export class EnvironmentError extends StintError {
  /** The variable's name, e.g. `STINT_LOG_LEVEL`, or the flag's, e.g. `--concurrency`. */
  readonly variable: string;

  constructor(variable: string, expected: string, got: string) {
    super(ErrorCode.Config, `${variable} ${expected}; got ${JSON.stringify(got)}`);
    this.variable = variable;
  }
}
