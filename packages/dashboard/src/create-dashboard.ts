import type { IncomingMessage, ServerResponse } from "node:http";
import { ConfigError, createLogger, QueueAdmin, type Clock, type JobEventSource, type Logger } from "@stint/core";
import { integerOption, rejectUnknownOptions } from "@stint/core/driver";
import { createDatabase, PostgresJobBrowser, PostgresJobEvents, PostgresJobStore } from "@stint/postgres-driver";
import { isKysely } from "@stint/postgres-driver/internal";
import type { Kysely } from "kysely";
import { PayloadPolicy, type KnownJobKind, type PayloadVisibility } from "./data/payload-policy";
import { resolveAuth, type DashboardAuth } from "./http/auth";
import { DashboardApp } from "./http/dashboard-app";
import { HostPolicy, readAllowedHosts } from "./http/host-policy";
import { DEFAULT_SESSION_LIMITS, SessionStore } from "./http/sessions";
import { DEFAULT_SIGN_IN_LIMITS, SignInLimiter } from "./http/sign-in-limiter";
import { StaticAssets } from "./http/static-assets";

/** Options of {@link createDashboard}. */
export interface DashboardOptions {
  /** The application's Kysely instance (its pool stays the application's). Give this or `connectionString`. */
  readonly db?: Kysely<any>;
  /** A database URL: the dashboard opens a small pool of its own, ended by `close()`. */
  readonly connectionString?: string;
  /** The schema `migrate` created. Default `"stint"`. */
  readonly schema?: string;
  /** Where the dashboard is mounted, such as `"/admin/jobs"`. Default `"/"`. */
  readonly basePath?: string;
  /** Required: a token, basic-auth credentials, or `"none"` (localhost only). */
  readonly auth: DashboardAuth;
  /** Hide every action and refuse every POST. Default false. */
  readonly readOnly?: boolean;
  /** The job kinds whose payloads the dashboard may show, each redacted by its `secretFields` (use your `defineJob` results). */
  readonly jobKinds?: readonly KnownJobKind[];
  /** `"known-kinds"` (default): hide payloads of other queues; `"all"`: show them unredacted, with a note. */
  readonly payloads?: PayloadVisibility;
  /** Where actions (who did what) and failures are logged. Default: stint's logger on stderr. */
  readonly log?: Logger;
  /** How often the overview refreshes itself, in ms, when no event stream serves it (see `events`). Default 5,000. */
  readonly refreshMs?: number;
  /**
   * Job events from every process (`container.resolve(JOB_EVENTS)`, or a
   * `PostgresJobEvents`): the overview and job pages then follow them
   * through `GET <base>/events` (server-sent events) and poll only when
   * the stream fails. Default: with `connectionString`, a
   * `PostgresJobEvents` of the dashboard's own (one listening connection,
   * opened by the first live page, ended by `close()`); with `db`, none.
   * `false`: none; pages poll every `refreshMs`.
   */
  readonly events?: JobEventSource | false;
  /**
   * Host names (or addresses) the dashboard answers for, compared with the
   * request's `Host` header, any port: a request naming another host gets
   * `421` (this stops DNS rebinding). With `auth: "none"` loopback names
   * (`localhost`, 127.0.0.0/8, `[::1]`) are always answered and these are
   * added to them; with a credential, every name is answered unless this
   * is given. Example: `["jobs.example.com"]`.
   */
  readonly allowedHosts?: readonly string[];
  /** How long a sign-in with the token lasts, used or not, in ms. Default 12 hours. */
  readonly sessionMaxAgeMs?: number;
  /** A session ends after this long without a request, in ms. Default 2 hours. */
  readonly sessionIdleMs?: number;
  /** The time sessions and the sign-in limit are measured by. Default: the system clock (tests pass a `ManualClock`). */
  readonly clock?: Pick<Clock, "now">;
}

/** A Node request handler (`node:http`, Express, Fastify's raw request) that serves the dashboard. */
export interface DashboardHandler {
  (request: IncomingMessage, response: ServerResponse, next?: (error?: unknown) => void): void;
  /** The normalised base path: `"/"` or `"/admin/jobs"`. */
  readonly basePath: string;
  /** Ends the pool the dashboard opened for `connectionString` (nothing for `db`). Idempotent. */
  close(): Promise<void>;
}

const OPTION_KEYS = [
  "db",
  "connectionString",
  "schema",
  "basePath",
  "auth",
  "readOnly",
  "jobKinds",
  "payloads",
  "log",
  "refreshMs",
  "events",
  "allowedHosts",
  "sessionMaxAgeMs",
  "sessionIdleMs",
  "clock",
];

/**
 * Creates the dashboard: a request handler that serves the overview, the
 * jobs list, job pages and the operator actions under `basePath`. Options
 * are checked here (`ConfigError` naming the option); nothing connects
 * until the first request.
 *
 * @example
 * ```ts
 * const dashboard = createDashboard({ db, basePath: "/admin/jobs", auth: { token: process.env.DASHBOARD_TOKEN! }, jobKinds: [SendInvoice] });
 * http.createServer(dashboard).listen(3000, "127.0.0.1");
 * app.use(dashboard);                                   // Express: requests outside /admin/jobs go to next()
 * ```
 */
export function createDashboard(options: DashboardOptions): DashboardHandler {
  if (typeof options !== "object" || options === null) throw new ConfigError("dashboard", "options must be an object");
  rejectUnknownOptions("dashboard", options, OPTION_KEYS);
  const clock = options.clock ?? { now: () => Date.now() };
  if (typeof clock !== "object" || clock === null || typeof clock.now !== "function") throw new ConfigError("clock", "must have a now() method");
  const sessions = new SessionStore(
    {
      ...DEFAULT_SESSION_LIMITS,
      maxAgeMs: integerOption("sessionMaxAgeMs", options.sessionMaxAgeMs ?? DEFAULT_SESSION_LIMITS.maxAgeMs, 60_000, 30 * 86_400_000),
      idleMs: integerOption("sessionIdleMs", options.sessionIdleMs ?? DEFAULT_SESSION_LIMITS.idleMs, 60_000, 30 * 86_400_000),
    },
    clock,
  );
  const auth = resolveAuth(options.auth, sessions);
  const hosts = new HostPolicy(auth.kind, readAllowedHosts(options.allowedHosts));
  const prefix = basePrefix(options.basePath ?? "/");
  if (options.readOnly !== undefined && typeof options.readOnly !== "boolean") throw new ConfigError("readOnly", "must be true or false");
  const refreshMs = integerOption("refreshMs", options.refreshMs ?? 5_000, 500, 3_600_000);
  const policy = new PayloadPolicy(options.jobKinds ?? [], options.payloads ?? "known-kinds");
  const log = options.log ?? createLogger();
  if (
    options.events !== undefined &&
    options.events !== false &&
    (typeof options.events !== "object" || options.events === null || typeof options.events.subscribe !== "function")
  ) {
    throw new ConfigError("events", "must be a JobEventSource (an object with a subscribe method) or false");
  }
  const { db, close: closeDatabase } = openDatabase(options, log);
  const schema = options.schema;
  const ownEvents =
    options.events === undefined && typeof options.connectionString === "string"
      ? new PostgresJobEvents({
          connectionString: options.connectionString,
          ...(schema === undefined ? {} : { schema }),
          applicationName: "stint-dashboard-events",
          onError: (error) => log.warn("Dashboard: the job events connection failed; live pages poll until it is back", { error }),
        })
      : undefined;
  const events = options.events === false ? undefined : (options.events ?? ownEvents);
  const close = async (): Promise<void> => {
    await ownEvents?.close();
    await closeDatabase();
  };
  const store = new PostgresJobStore(schema === undefined ? { db } : { db, schema });
  const browser = new PostgresJobBrowser(schema === undefined ? { db } : { db, schema });
  const app = new DashboardApp({
    sources: { store, browser, admin: new QueueAdmin(store), ...(events === undefined ? {} : { events }) },
    auth,
    policy,
    assets: new StaticAssets(),
    prefix,
    readOnly: options.readOnly ?? false,
    refreshMs,
    log,
    hosts,
    signIns: new SignInLimiter(DEFAULT_SIGN_IN_LIMITS, clock),
  });
  const handler = (request: IncomingMessage, response: ServerResponse, next?: (error?: unknown) => void): void => {
    void app.handle(request, response, next);
  };
  return Object.assign(handler, { basePath: prefix === "" ? "/" : prefix, close });
}

/**
 * True for a base path the dashboard can be mounted at: `/`, or segments of
 * letters, digits and `. _ ~ -` (not `.` or `..` alone), at most 200
 * characters, with or without a trailing slash.
 *
 * @example
 * ```ts
 * isBasePath("/admin/jobs"); // true
 * isBasePath("admin");       // false
 * ```
 */
export function isBasePath(basePath: unknown): basePath is string {
  if (typeof basePath !== "string" || basePath.length > 200 || !/^(?:\/[A-Za-z0-9._~-]+)*\/?$/.test(basePath)) return false;
  return basePath.split("/").every((segment) => segment !== "." && segment !== "..");
}

function basePrefix(basePath: unknown): string {
  if (!isBasePath(basePath)) {
    throw new ConfigError("basePath", 'must be a path such as "/" or "/admin/jobs" (letters, digits, . _ ~ -)');
  }
  return basePath.replace(/\/$/, "");
}

function openDatabase(options: DashboardOptions, log: Logger): { readonly db: Kysely<any>; readonly close: () => Promise<void> } {
  const given = [options.db !== undefined, options.connectionString !== undefined].filter(Boolean).length;
  if (given !== 1) throw new ConfigError("db", "give exactly one of db (your Kysely instance) or connectionString");
  if (options.db !== undefined) {
    if (!isKysely(options.db)) throw new ConfigError("db", "must be a Kysely instance");
    return { db: options.db, close: () => Promise.resolve() };
  }
  if (typeof options.connectionString !== "string" || options.connectionString === "") throw new ConfigError("connectionString", "must be a database URL");
  const database = createDatabase({
    connectionString: options.connectionString,
    maxConnections: 4,
    applicationName: "stint-dashboard",
    statementTimeoutMs: 30_000,
    // Behind a pooler, what the pool changed by itself goes to the dashboard's log.
    onWarning: (warning) => log.warn(warning.message, { code: warning.code }),
  });
  return database;
}
