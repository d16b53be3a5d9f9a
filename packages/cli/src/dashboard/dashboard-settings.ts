import { isIP } from "node:net";
import { integerValue } from "../args/option-values";
import { configError } from "../cli-error";

/**
 * The credential the dashboard asks for, in the shape `createDashboard`'s
 * `auth` takes (the CLI's declarations do not name `@stint/dashboard`,
 * which is an optional dependency; `stint dashboard` passes this on, so
 * the compiler checks that the shapes agree).
 */
export type DashboardCredential = "none" | { readonly token: string } | { readonly basicAuth: { readonly username: string; readonly password: string } };

/**
 * The dashboard's own rules for credentials and paths, as `@stint/dashboard`
 * exports them: the loaded package itself is one.
 */
export interface DashboardRules {
  readonly MIN_TOKEN_LENGTH: number;
  readonly MIN_PASSWORD_LENGTH: number;
  isBasePath(path: string): boolean;
}

/** What `stint dashboard`'s options and environment say, checked. */
export interface DashboardSettings {
  readonly host: string;
  readonly port: number;
  readonly basePath: string;
  readonly auth: DashboardCredential;
  /** How the credential is described on start-up (never the credential itself). */
  readonly authText: string;
  readonly readOnly: boolean;
  /** Host names the dashboard answers for besides (without auth) loopback ones; empty: loopback only without auth, any with a credential. */
  readonly allowedHosts: readonly string[];
}

/** The flags and variables {@link readDashboardSettings} reads. */
export interface DashboardFlags {
  readonly port?: string;
  readonly host?: string;
  readonly token?: string;
  readonly basicAuth?: string;
  readonly noAuth: boolean;
  readonly readOnly: boolean;
  readonly basePath?: string;
  /** `$STINT_DASHBOARD_TOKEN`. */
  readonly envToken?: string;
  /** `--allowed-hosts`: host names or addresses, separated by commas. */
  readonly allowedHosts?: string;
  /** `$STINT_DASHBOARD_ALLOWED_HOSTS`, read when `--allowed-hosts` is not given. */
  readonly envAllowedHosts?: string;
}

/**
 * Checks the dashboard's flags: exactly one credential (`--token`, else
 * `$STINT_DASHBOARD_TOKEN`; or `--basic-auth user:pass`) unless
 * `--no-auth`, and `--no-auth` only on a loopback address; lengths and
 * paths as the dashboard's `rules` say; `--allowed-hosts` (else
 * `$STINT_DASHBOARD_ALLOWED_HOSTS`) as host names or addresses separated
 * by commas, without ports or schemes. Every refusal is a configuration
 * error (exit 78) naming the flag.
 *
 * @example
 * ```ts
 * const dashboard = loadDashboardPackage<typeof import("@stint/dashboard")>();
 * readDashboardSettings({ noAuth: false, readOnly: false, envToken: "…" }, dashboard); // { host: "127.0.0.1", port: 3000, auth: { token: "…" }, … }
 * ```
 */
export function readDashboardSettings(flags: DashboardFlags, rules: DashboardRules): DashboardSettings {
  const { MIN_TOKEN_LENGTH, MIN_PASSWORD_LENGTH } = rules;
  const host = (flags.host ?? "127.0.0.1").trim();
  if (host === "" || (isIP(host) === 0 && !/^[A-Za-z0-9.-]{1,253}$/.test(host)))
    throw configError(`--host must be an address or a host name, got ${JSON.stringify(flags.host)}`);
  const port = flags.port === undefined ? 3000 : integerValue("--port", flags.port, 0, 65_535);
  const basePath = flags.basePath ?? "/";
  if (!rules.isBasePath(basePath)) throw configError(`--base-path must be a path such as / or /admin/jobs, got ${JSON.stringify(basePath)}`);
  const token = flags.token ?? (flags.envToken?.trim() || undefined);
  const given = [token !== undefined, flags.basicAuth !== undefined].filter(Boolean).length;
  const base = { host, port, basePath, readOnly: flags.readOnly, allowedHosts: readAllowedHosts(flags.allowedHosts ?? flags.envAllowedHosts) };
  if (flags.noAuth) {
    if (given > 0) throw configError("--no-auth cannot go with --token, $STINT_DASHBOARD_TOKEN or --basic-auth: choose one");
    if (!isLoopback(host))
      throw configError(`--no-auth serves the dashboard to anyone who can reach ${host}: it is allowed only on a loopback address such as 127.0.0.1`);
    return { ...base, auth: "none", authText: "no authentication (loopback only)" };
  }
  if (given === 0) {
    throw configError(
      "the dashboard needs a credential: set $STINT_DASHBOARD_TOKEN (or pass --token or --basic-auth user:password), or pass --no-auth on 127.0.0.1",
    );
  }
  if (given > 1) throw configError("give one credential: a token (--token or $STINT_DASHBOARD_TOKEN) or --basic-auth, not both");
  if (token !== undefined) {
    if (token.length < MIN_TOKEN_LENGTH || /\s/.test(token)) {
      throw configError(
        `the token (--token or $STINT_DASHBOARD_TOKEN) must be at least ${MIN_TOKEN_LENGTH} characters without spaces; make one with: openssl rand -hex 24`,
      );
    }
    return { ...base, auth: { token }, authText: "token; sign in with the token" };
  }
  const colon = flags.basicAuth!.indexOf(":");
  const username = flags.basicAuth!.slice(0, colon);
  const password = flags.basicAuth!.slice(colon + 1);
  if (colon <= 0 || password.length < MIN_PASSWORD_LENGTH) {
    throw configError(`--basic-auth must be user:password with a password of at least ${MIN_PASSWORD_LENGTH} characters`);
  }
  return { ...base, auth: { basicAuth: { username, password } }, authText: `basic auth as ${username}` };
}

/** The entries of `--allowed-hosts` (or its variable), each a host name or an address; exit 78 naming the first that is not. */
function readAllowedHosts(text: string | undefined): readonly string[] {
  if (text === undefined || text.trim() === "") return [];
  return text.split(",").map((entry) => {
    const host = entry.trim();
    if (isIP(host) === 0 && !/^[A-Za-z0-9.-]{1,253}$/.test(host)) {
      throw configError(
        `--allowed-hosts (or $STINT_DASHBOARD_ALLOWED_HOSTS) must be host names or addresses separated by commas, without a port or scheme; got ${JSON.stringify(host)}`,
      );
    }
    return host;
  });
}

/** True for 127.0.0.0/8, ::1 and localhost. */
export function isLoopback(host: string): boolean {
  return host === "localhost" || host === "::1" || /^127(?:\.\d{1,3}){3}$/.test(host);
}
