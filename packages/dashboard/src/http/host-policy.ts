import type { IncomingMessage } from "node:http";
import { ConfigError } from "@stint/core";
import { DashboardErrorCode, RequestRefused } from "./request-refused";

/** What a `Host` header may hold: a name, an IPv4 address or a bracketed IPv6 address, and a port. */
const HOST_HEADER = /^(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+)(?::\d{1,5})?$/;
/** What an `allowedHosts` entry may hold: a host name or an address, without a port. */
const ALLOWED_ENTRY = /^(?:\[[0-9A-Fa-f:.]+\]|[0-9A-Fa-f:]*:[0-9A-Fa-f:.]*|[A-Za-z0-9.-]{1,253})$/;

/**
 * Which host names the dashboard answers for, as the browser names them in
 * the `Host` header (and `X-Forwarded-Host`, when a proxy or a script sets
 * it). A page of another site can reach a dashboard on 127.0.0.1 by
 * pointing its own name at that address (DNS rebinding): it then reads and
 * posts as a page of the same origin, under its own name. So:
 *
 * - without auth, only loopback names are answered (`localhost`,
 *   127.0.0.0/8, `[::1]`, any port), plus the names in `allowedHosts`;
 * - with a credential, any name is answered unless `allowedHosts` is
 *   given (the rebound page gets no credential: the browser keeps the
 *   session cookie and the password for the real name), and then only the
 *   names in it.
 *
 * @example
 * ```ts
 * const hosts = new HostPolicy("none", []);
 * hosts.check(request); // throws a 421 RequestRefused for "Host: rebind.evil.example:3101"
 * ```
 */
export class HostPolicy {
  readonly #loopbackToo: boolean;
  readonly #allowed: ReadonlySet<string> | undefined;

  constructor(authKind: "token" | "basic" | "none", allowedHosts: readonly string[]) {
    this.#loopbackToo = authKind === "none";
    this.#allowed = authKind === "none" || allowedHosts.length > 0 ? new Set(allowedHosts) : undefined;
  }

  /** Throws a `421` naming the host when the request's `Host` (or `X-Forwarded-Host`) is not one this dashboard answers for. */
  check(request: IncomingMessage): void {
    if (this.#allowed === undefined) return;
    const forwarded = request.headers["x-forwarded-host"];
    const named = [request.headers.host, ...(Array.isArray(forwarded) ? forwarded : forwarded === undefined ? [] : forwarded.split(","))];
    for (const value of named) {
      const host = hostOfHeader(value?.trim());
      if (host !== undefined && (this.#allowed.has(host) || (this.#loopbackToo && isLoopbackHost(host)))) continue;
      throw new RequestRefused(DashboardErrorCode.HostNotAllowed, this.#explain(value));
    }
  }

  #explain(value: string | undefined): string {
    const shown = value === undefined ? "no host" : JSON.stringify(value.slice(0, 100));
    const listed = [...this.#allowed!].join(", ");
    const answered = this.#loopbackToo ? `localhost, 127.0.0.1 or [::1]${listed === "" ? "" : ` and ${listed}`}` : listed;
    return `This dashboard answers only at ${answered}; the request named ${shown}. If that name is yours, add it to the dashboard's allowed hosts (allowedHosts, or stint dashboard --allowed-hosts).`;
  }
}

/**
 * The host of a `Host` header in the form entries are compared in
 * (lower case, no port, no trailing dot, IPv6 in brackets and shortest
 * form), or `undefined` for a missing or malformed one.
 */
export function hostOfHeader(value: string | undefined): string | undefined {
  if (value === undefined || !HOST_HEADER.test(value)) return undefined;
  try {
    const { hostname, port } = new URL(`http://${value}`);
    if (port !== "" && Number(port) > 65_535) return undefined;
    return hostname.replace(/\.$/, "");
  } catch {
    return undefined;
  }
}

/** True for `localhost`, 127.0.0.0/8 and `[::1]` (in the form {@link hostOfHeader} returns). */
export function isLoopbackHost(host: string): boolean {
  return host === "localhost" || host === "[::1]" || /^127(?:\.\d{1,3}){3}$/.test(host);
}

/**
 * Checks the `allowedHosts` option and returns its entries in the form
 * {@link hostOfHeader} returns; throws `ConfigError("allowedHosts")`
 * naming the first entry that is not a host name or an address.
 *
 * @example
 * ```ts
 * readAllowedHosts(["Jobs.Example.com", "10.0.0.5", "::1"]); // ["jobs.example.com", "10.0.0.5", "[::1]"]
 * ```
 */
export function readAllowedHosts(value: unknown): readonly string[] {
  if (value === undefined) return [];
  if (!Array.isArray(value) || value.length > 100) throw new ConfigError("allowedHosts", "must be an array of at most 100 host names or addresses");
  return value.map((entry: unknown) => {
    const text = typeof entry === "string" ? entry.trim() : "";
    const bracketed = text.includes(":") && !text.startsWith("[") ? `[${text}]` : text;
    const host = ALLOWED_ENTRY.test(text) ? hostOfHeader(bracketed) : undefined;
    if (host === undefined || host === "") {
      throw new ConfigError("allowedHosts", `must hold host names or addresses without a port or scheme, got ${JSON.stringify(entry)}`);
    }
    return host;
  });
}
