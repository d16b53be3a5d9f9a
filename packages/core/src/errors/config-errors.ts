import { ErrorCode } from "./error-codes";
import { StintError } from "./stint-error";
import { describeIssues, type PayloadIssue } from "../job/payload-issues";

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

  constructor(option: string, problem: string, options?: { cause?: unknown }) {
    super(ErrorCode.Config, `Invalid option \`${option}\`: ${problem}`, options);
    this.option = option;
  }
}

/**
 * A payload cannot be stored: it is not JSON-serialisable, would not come
 * back from JSON as given (a `Map`, a `Set`, a `Date`, a sparse array …),
 * holds text PostgreSQL cannot store, is nested too deep or is too large.
 * Nothing was inserted. `path` names the refused value when there is one.
 *
 * @example
 * ```ts
 * // PayloadError: payload of queue "send-invoice" is 2097152 bytes of JSON, more than the limit of 1048576 bytes
 * err.sizeBytes;  // 2097152
 * err.limitBytes; // 1048576
 * ```
 */
export class PayloadError extends StintError {
  /** The payload's size in bytes of UTF-8 JSON, when the size was the problem. */
  readonly sizeBytes: number | undefined;
  /** The limit it exceeded, when the size was the problem. */
  readonly limitBytes: number | undefined;
  /** Where in the payload the refused value is (`payload.items[3].tags`), when one value was the problem. */
  readonly path: string | undefined;

  constructor(message: string, options?: { cause?: unknown; sizeBytes?: number; limitBytes?: number; path?: string }) {
    super(ErrorCode.Payload, message, options);
    this.sizeBytes = options?.sizeBytes;
    this.limitBytes = options?.limitBytes;
    this.path = options?.path;
  }
}

/**
 * A payload failed its job kind's `schema` at enqueue: nothing was
 * inserted. The code is `STINT_PAYLOAD`, like any refused payload;
 * `issues` lists each field the validator named with its message, and
 * `path` is the first of them.
 *
 * @example
 * ```ts
 * // PayloadSchemaError: payload of queue "send-welcome" failed its schema: payload.email: Invalid email address
 * err.issues; // [{ path: "payload.email", message: "Invalid email address" }]
 * ```
 */
export class PayloadSchemaError extends PayloadError {
  /** Each problem the validator reported: where in the payload, and its message. */
  readonly issues: readonly PayloadIssue[];

  constructor(queue: string, issues: readonly PayloadIssue[]) {
    super(`payload of queue "${queue}" failed its schema: ${describeIssues(issues)}`, { path: issues[0]?.path ?? "payload" });
    this.issues = Object.freeze([...issues]);
  }
}

/** A schema or queue name is not acceptable; refused before any SQL runs. */
export class InvalidNameError extends StintError {
  constructor(message: string) {
    super(ErrorCode.InvalidName, message);
  }
}
