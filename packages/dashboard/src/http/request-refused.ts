/** Stable codes of the requests the dashboard refuses. */
export const DashboardErrorCode = {
  BadRequest: "STINT_DASHBOARD_BAD_REQUEST",
  Unauthorized: "STINT_DASHBOARD_UNAUTHORIZED",
  Forbidden: "STINT_DASHBOARD_FORBIDDEN",
  NotFound: "STINT_DASHBOARD_NOT_FOUND",
  MethodNotAllowed: "STINT_DASHBOARD_METHOD_NOT_ALLOWED",
  TooLarge: "STINT_DASHBOARD_TOO_LARGE",
  UriTooLong: "STINT_DASHBOARD_URI_TOO_LONG",
  Conflict: "STINT_DASHBOARD_CONFLICT",
  Unavailable: "STINT_DASHBOARD_UNAVAILABLE",
  /** The request named a host the dashboard does not answer for (DNS rebinding; see `allowedHosts`). */
  HostNotAllowed: "STINT_DASHBOARD_HOST_NOT_ALLOWED",
  /** Too many wrong credentials from one address: wait `Retry-After` seconds. */
  TooManyAttempts: "STINT_DASHBOARD_TOO_MANY_ATTEMPTS",
} as const;

/** One of the values of {@link DashboardErrorCode}. */
export type DashboardErrorCode = (typeof DashboardErrorCode)[keyof typeof DashboardErrorCode];

const STATUS: Readonly<Record<DashboardErrorCode, number>> = {
  STINT_DASHBOARD_BAD_REQUEST: 400,
  STINT_DASHBOARD_UNAUTHORIZED: 401,
  STINT_DASHBOARD_FORBIDDEN: 403,
  STINT_DASHBOARD_NOT_FOUND: 404,
  STINT_DASHBOARD_METHOD_NOT_ALLOWED: 405,
  STINT_DASHBOARD_TOO_LARGE: 413,
  STINT_DASHBOARD_URI_TOO_LONG: 414,
  STINT_DASHBOARD_CONFLICT: 409,
  STINT_DASHBOARD_UNAVAILABLE: 503,
  STINT_DASHBOARD_HOST_NOT_ALLOWED: 421,
  STINT_DASHBOARD_TOO_MANY_ATTEMPTS: 429,
};

/**
 * A request the dashboard answers with an error page: its HTTP status
 * follows from the stable `code`, and `message` is shown to the viewer
 * (it never holds a stack or SQL); `headers` go with the error page
 * (such as `Retry-After`).
 *
 * @example
 * ```ts
 * throw new RequestRefused(DashboardErrorCode.NotFound, `There is no job 812.`);
 * ```
 */
export class RequestRefused extends Error {
  readonly code: DashboardErrorCode;
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;

  constructor(code: DashboardErrorCode, message: string, headers: Readonly<Record<string, string>> = {}) {
    super(message);
    this.name = "RequestRefused";
    this.code = code;
    this.status = STATUS[code];
    this.headers = headers;
  }
}

/** A `400` naming the query parameter or form field at fault. */
export function badParameter(name: string, problem: string): RequestRefused {
  return new RequestRefused(DashboardErrorCode.BadRequest, `The parameter "${name}" ${problem}.`);
}
