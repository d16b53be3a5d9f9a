import type { IncomingMessage } from "node:http";

/**
 * True when a POST comes from a page of another site, as far as the
 * browser tells: `Sec-Fetch-Site: cross-site`, or an `Origin` whose host
 * is not the request's. A second line behind the CSRF token.
 */
export function isCrossSite(request: IncomingMessage): boolean {
  if (request.headers["sec-fetch-site"] === "cross-site") return true;
  const origin = request.headers.origin;
  if (origin === undefined) return false;
  if (origin === "null") return true;
  const host = firstHeader(request.headers["x-forwarded-host"]) ?? request.headers.host;
  try {
    return new URL(origin).host !== host;
  } catch {
    return true;
  }
}

/** True when the request came over TLS (directly, or through a proxy that says so). */
export function isSecure(request: IncomingMessage): boolean {
  return ("encrypted" in request.socket && request.socket.encrypted === true) || firstHeader(request.headers["x-forwarded-proto"]) === "https";
}

function firstHeader(value: string | string[] | undefined): string | undefined {
  const text = Array.isArray(value) ? value[0] : value;
  return text?.split(",")[0]?.trim();
}
