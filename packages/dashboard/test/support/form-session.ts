import { TEST_TOKEN, type DashboardServer } from "./dashboard-server";

/** The bearer credential of {@link TEST_TOKEN}, as a request header. */
export const AUTH_HEADER = Object.freeze({ authorization: `Bearer ${TEST_TOKEN}` });

/** What a test's POSTs carry: the CSRF cookie the dashboard set and the token its forms hold. */
export interface FormSession {
  readonly cookie: string;
  readonly token: string;
}

/**
 * Opens the overview with {@link AUTH_HEADER} and keeps the CSRF cookie it
 * sets and the token of its forms, for requests that act as a browser would.
 *
 * @example
 * ```ts
 * const { cookie, token } = await openFormSession(server);
 * await fetch(`${server.url}/queues/q/pause`, { method: "POST", headers: { ...AUTH_HEADER, cookie }, body: `_csrf=${token}` });
 * ```
 */
export async function openFormSession(server: DashboardServer): Promise<FormSession> {
  const page = await fetch(`${server.url}/`, { headers: AUTH_HEADER });
  const cookie = page.headers
    .getSetCookie()
    .find((line) => line.startsWith("stint_dashboard_csrf="))!
    .split(";")[0]!;
  return { cookie, token: /name="_csrf" value="([^"]+)"/.exec(await page.text())![1]! };
}
