import { ErrorCode } from "./error-codes";

/**
 * The base of every error stint throws. It carries a stable `code` and the
 * original `cause`. Recognise errors with {@link hasErrorCode}, which also
 * works across duplicated copies of this package where `instanceof` fails.
 *
 * @example
 * ```ts
 * throw new StintError(ErrorCode.Config, "concurrency must be at least 1");
 * ```
 */
export class StintError extends Error {
  readonly code: ErrorCode;

  constructor(code: ErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
    this.name = new.target.name;
  }
}

/**
 * True when `error` is an object whose `code` is the given stint code.
 *
 * @example
 * ```ts
 * if (hasErrorCode(err, ErrorCode.Permanent)) { ... }
 * ```
 */
export function hasErrorCode(error: unknown, code: ErrorCode): boolean {
  return typeof error === "object" && error !== null && (error as { code?: unknown }).code === code;
}

/** The stint code of `error`, or `undefined` when it carries none. */
export function errorCodeOf(error: unknown): ErrorCode | undefined {
  if (typeof error !== "object" || error === null) return undefined;
  const code = (error as { code?: unknown }).code;
  return typeof code === "string" && (Object.values(ErrorCode) as string[]).includes(code) ? (code as ErrorCode) : undefined;
}
