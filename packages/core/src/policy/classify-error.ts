import { ErrorCode } from "../errors/error-codes";
import { errorCodeOf } from "../errors/stint-error";

const PERMANENT_CODES: ReadonlySet<string> = new Set([
  ErrorCode.Permanent,
  ErrorCode.Parse,
  ErrorCode.Config,
  ErrorCode.Payload,
  ErrorCode.InvalidName,
  ErrorCode.Cancelled,
  ErrorCode.WorkflowInvalid,
]);

/** Error names that mean "the input is wrong": retrying the same input cannot help. */
const VALIDATION_NAMES = /^(ValidationError|ZodError|ValiError|SyntaxError|AuthenticationError|AuthorizationError|ForbiddenError|UnauthorizedError)$/;

/** HTTP statuses that will not change on retry (bad request, auth, not found, gone, unprocessable). */
const PERMANENT_HTTP = new Set([400, 401, 403, 404, 405, 410, 413, 422]);

/**
 * The default answer to "is this failure worth another attempt?".
 *
 * Permanent (returns false): `PermanentError`, parse errors, stint
 * configuration, payload and workflow-definition errors, errors named like validation or auth
 * failures (`ValidationError`, `ZodError`, `SyntaxError`, `UnauthorizedError`,
 * …) and HTTP-style errors whose `status`/`statusCode` is 400, 401, 403,
 * 404, 405, 410, 413 or 422. Everything else is retryable: timeouts, rate
 * limits (429), 5xx, connection and database infrastructure errors, and
 * plain errors whose cause is unknown.
 *
 * @example
 * ```ts
 * isRetryableByDefault(new PermanentError("no such customer")); // false
 * isRetryableByDefault(Object.assign(new Error("busy"), { status: 503 })); // true
 * ```
 */
export function isRetryableByDefault(error: unknown): boolean {
  const code = errorCodeOf(error);
  if (code !== undefined) return !PERMANENT_CODES.has(code);
  if (typeof error !== "object" || error === null) return true;
  const name = (error as { name?: unknown }).name;
  if (typeof name === "string" && VALIDATION_NAMES.test(name)) return false;
  const status = httpStatusOf(error);
  if (status !== undefined) return !PERMANENT_HTTP.has(status);
  return true;
}

function httpStatusOf(error: object): number | undefined {
  const candidates = [
    (error as { status?: unknown }).status,
    (error as { statusCode?: unknown }).statusCode,
    (error as { response?: { status?: unknown } }).response?.status,
  ];
  for (const candidate of candidates) {
    if (typeof candidate === "number" && Number.isInteger(candidate)) return candidate;
  }
  return undefined;
}
