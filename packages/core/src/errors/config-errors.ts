import { ErrorCode } from "./error-codes";
import { StintError } from "./stint-error";

/**
 * An option, registration or descriptor is invalid. Thrown at construction,
 * never during a run; the message names the offending option.
 *
 * @example
 * ```ts
 * new ConfigError("concurrency", "must be an integer from 1 to 1000, got 0");
 * // message: "Invalid option `concurrency`: must be an integer from 1 to 1000, got 0"
 * ```
 */
export class ConfigError extends StintError {
  readonly option: string;

  constructor(option: string, problem: string) {
    super(ErrorCode.Config, `Invalid option \`${option}\`: ${problem}`);
    this.option = option;
  }
}

/** A payload cannot be stored: it is not JSON-serialisable or too large. Nothing was inserted. */
export class PayloadError extends StintError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(ErrorCode.Payload, message, options);
  }
}

/** A schema or queue name is not acceptable; refused before any SQL runs. */
export class InvalidNameError extends StintError {
  constructor(message: string) {
    super(ErrorCode.InvalidName, message);
  }
}
