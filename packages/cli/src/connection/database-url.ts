import { configError } from "../cli-error";

/** Where the CLI connects, read from `--database-url` or `DATABASE_URL`. */
export interface DatabaseTarget {
  /** The connection string as given. */
  readonly url: string;
  /** Host and port for messages, never with the password: `127.0.0.1:5432`. */
  readonly address: string;
  /** Where the URL came from, for messages. */
  readonly source: "--database-url" | "DATABASE_URL";
  /** The URL holds a password (`user:password@`, or `?password=`); without one, pg reads PGPASSWORD and ~/.pgpass. */
  readonly hasPassword: boolean;
}

const EXAMPLE = "postgres://user:password@host:5432/database";

/**
 * Reads and checks the connection string: `--database-url` wins over the
 * `DATABASE_URL` environment variable. No URL, or one that is not a
 * `postgres://` / `postgresql://` URL, is a configuration error (exit 78)
 * that says how to set it.
 *
 * @example
 * ```ts
 * resolveDatabaseTarget(undefined, { DATABASE_URL: "postgres://app@db:5432/app" }).address; // "db:5432"
 * ```
 */
export function resolveDatabaseTarget(given: string | undefined, env: Readonly<Record<string, string | undefined>>): DatabaseTarget {
  const fromOption = given !== undefined;
  const url = (fromOption ? given : env["DATABASE_URL"]) ?? "";
  const source = fromOption ? "--database-url" : "DATABASE_URL";
  if (url.trim() === "") {
    throw configError(`no database given: set DATABASE_URL (e.g. export DATABASE_URL=${EXAMPLE}) or pass --database-url ${EXAMPLE}`);
  }
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw invalidUrl(url, source);
  }
  if (parsed.protocol !== "postgres:" && parsed.protocol !== "postgresql:") throw invalidUrl(url, source);
  const socketHost = parsed.searchParams.get("host");
  const host = parsed.hostname !== "" ? parsed.hostname.replace(/^\[(.*)\]$/, "$1") : (socketHost ?? "localhost");
  const port = parsed.port !== "" ? parsed.port : (parsed.searchParams.get("port") ?? "5432");
  const hasPassword = parsed.password !== "" || (parsed.searchParams.get("password") ?? "") !== "";
  return Object.freeze({ url, address: `${host}:${port}`, source, hasPassword });
}

/** The URL with its password replaced by `***`, for messages. */
export function redactUrl(url: string): string {
  return url.replace(/^([a-z][a-z0-9+.-]*:\/\/[^:/?#@]*):[^@/?#]*@/i, "$1:***@");
}

function invalidUrl(url: string, source: string): Error {
  const origin = source === "--database-url" ? " (given by --database-url)" : "";
  return configError(`DATABASE_URL is not a valid PostgreSQL URL${origin}: ${JSON.stringify(redactUrl(url))}; expected ${EXAMPLE}`);
}
