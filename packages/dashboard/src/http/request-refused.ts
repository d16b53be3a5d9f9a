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
};

/**
 * A request the dashboard answers with an error page: its HTTP status
 * follows from the stable `code`, and `message` is shown to the viewer
 * (it never holds a stack or SQL).
 *
 * @example
 * ```ts
 * throw new RequestRefused(DashboardErrorCode.NotFound, `There is no job 812.`);
 * ```
 */
export class RequestRefused extends Error {
  readonly code: DashboardErrorCode;
  readonly status: number;

  constructor(code: DashboardErrorCode, message: string) {
    super(message);
    this.name = "RequestRefused";
    this.code = code;
    this.status = STATUS[code];
  }
}

/** A `400` naming the query parameter or form field at fault. */
export function badParameter(name: string, problem: string): RequestRefused {
  return new RequestRefused(DashboardErrorCode.BadRequest, `The parameter "${name}" ${problem}.`);
}
