/**
 * A payload field failed validation. The message names the field and shows
 * the value it got, so the job's `last_error` says what to fix. Its `name`
 * is `ValidationError`, which stint's default error classification treats
 * as permanent wherever it is thrown.
 *
 * @example
 * ```ts
 * throw new ValidationError("invoiceId", "must be a positive integer", "abc");
 * // message: invoiceId must be a positive integer, got "abc"
 * ```
 */
export class ValidationError extends Error {
  /** The payload field that failed, e.g. `invoiceId`. */
  readonly field: string;

  constructor(field: string, requirement: string, got: unknown) {
    super(`${field} ${requirement}, got ${describeValue(got)}`);
    this.name = "ValidationError";
    this.field = field;
  }
}

function describeValue(value: unknown): string {
  if (value === undefined) return "nothing";
  if (typeof value === "bigint") return `${value}n`;
  try {
    const text = JSON.stringify(value);
    return text.length > 80 ? `${text.slice(0, 77)}...` : text;
  } catch {
    return "a value JSON cannot write (a cycle, or a bigint inside)";
  }
}
