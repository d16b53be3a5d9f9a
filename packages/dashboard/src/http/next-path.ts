import { badParameter } from "./request-refused";

const PLACEHOLDER_ORIGIN = "http://dashboard.invalid";

/**
 * Where to go after signing in: `next` when it is a path of this
 * dashboard (under `prefix`, the base path without a trailing slash),
 * re-encoded as the parser read it; the overview for anything else (another
 * site, `//host`, `/\host`, a backslash, a scheme, a path outside the base
 * path). A control character, raw or percent-decoded from the query, is
 * refused with `400`: no link of the dashboard holds one.
 *
 * @example
 * ```ts
 * safeNext("/admin/jobs/jobs?state=dead", "/admin/jobs"); // "/admin/jobs/jobs?state=dead"
 * safeNext("//evil.example", "/admin/jobs");              // "/admin/jobs/"
 * safeNext("/\t/evil.example", "");                       // throws a 400 RequestRefused
 * ```
 */
export function safeNext(next: string, prefix: string): string {
  const home = `${prefix}/`;
  if (hasControlCharacter(next)) throw badParameter("next", "must not hold control characters");
  if (!next.startsWith("/") || next.startsWith("//") || next.includes("\\")) return home;
  let url: URL;
  try {
    url = new URL(next, PLACEHOLDER_ORIGIN);
  } catch {
    return home;
  }
  if (url.origin !== PLACEHOLDER_ORIGIN || url.pathname.startsWith("//")) return home;
  if (prefix !== "" && url.pathname !== prefix && !url.pathname.startsWith(home)) return home;
  return `${url.pathname}${url.search}`;
}

/** C0 controls, DEL and C1 controls: browsers drop some of them from URLs, which turns `/\t/evil.example` into `//evil.example`. */
function hasControlCharacter(text: string): boolean {
  for (let index = 0; index < text.length; index += 1) {
    const code = text.charCodeAt(index);
    if (code < 0x20 || (code >= 0x7f && code <= 0x9f)) return true;
  }
  return false;
}
