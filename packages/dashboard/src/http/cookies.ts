/** The cookie that holds a token viewer's session (see `Authenticator.signIn`). */
export const SESSION_COOKIE = "stint_dashboard_session";
/** The cookie that holds the browser's CSRF nonce. */
export const CSRF_COOKIE = "stint_dashboard_csrf";

/** The cookies of a `Cookie` header, by name (the first of a repeated name wins). */
export function parseCookies(header: string | undefined): ReadonlyMap<string, string> {
  const cookies = new Map<string, string>();
  for (const part of (header ?? "").split(";")) {
    const equals = part.indexOf("=");
    if (equals <= 0) continue;
    const name = part.slice(0, equals).trim();
    if (!cookies.has(name)) cookies.set(name, part.slice(equals + 1).trim());
  }
  return cookies;
}

/**
 * A `Set-Cookie` value: `HttpOnly`, `SameSite=Strict`, scoped to `path`,
 * `Secure` when the request came over TLS. `maxAgeSeconds: 0` deletes it.
 */
export function cookieHeader(
  name: string,
  value: string,
  options: { readonly path: string; readonly secure: boolean; readonly maxAgeSeconds?: number },
): string {
  const parts = [`${name}=${value}`, `Path=${options.path}`, "HttpOnly", "SameSite=Strict"];
  if (options.maxAgeSeconds !== undefined) parts.push(`Max-Age=${options.maxAgeSeconds}`);
  if (options.secure) parts.push("Secure");
  return parts.join("; ");
}
