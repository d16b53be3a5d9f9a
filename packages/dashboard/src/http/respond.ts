import type { ServerResponse } from "node:http";
import type { Html } from "../html/html";

/**
 * What every page is sent with: no script but the dashboard's own file
 * (so even markup that escaped escaping could not run), no framing, no
 * caching, no referrer to other sites (a same-origin one keeps the `Origin` header the POST check reads).
 */
const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  "Content-Security-Policy":
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  "X-Content-Type-Options": "nosniff",
  "X-Frame-Options": "DENY",
  "Referrer-Policy": "same-origin",
  "Cache-Control": "no-store",
};

/** Sends a page (or a fragment of one) with the security headers. */
export function sendHtml(response: ServerResponse, status: number, body: Html, headers: Readonly<Record<string, string | string[]>> = {}): void {
  const text = body.toString();
  response.writeHead(status, {
    ...SECURITY_HEADERS,
    ...headers,
    "Content-Type": "text/html; charset=utf-8",
    "Content-Length": Buffer.byteLength(text),
  });
  response.end(text);
}

/** A `303 See Other` to `location` (after a POST: the browser GETs it). */
export function redirect(response: ServerResponse, location: string, headers: Readonly<Record<string, string | string[]>> = {}): void {
  response.writeHead(303, { ...SECURITY_HEADERS, ...headers, Location: location, "Content-Length": 0 });
  response.end();
}
