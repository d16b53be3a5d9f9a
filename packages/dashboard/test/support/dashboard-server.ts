import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { LogFields, Logger } from "@stint/core";
import { createTestSchema, type TestSchema } from "@stint/postgres-driver/testing";
import { createDashboard, type DashboardOptions } from "../../src/index";

/** A token the tests sign in with. */
export const TEST_TOKEN = "test-token-0123456789abcdef";

/** A log line the dashboard wrote. */
export interface LoggedLine {
  readonly level: "error" | "warn" | "info" | "debug";
  readonly message: string;
  readonly fields: LogFields | undefined;
}

/** A logger that keeps every line, for tests that check who did what. */
export function recordingLogger(lines: LoggedLine[]): Logger {
  const logger: Logger = {
    error: (message, fields) => void lines.push({ level: "error", message: String(message), fields }),
    warn: (message, fields) => void lines.push({ level: "warn", message: String(message), fields }),
    info: (message, fields) => void lines.push({ level: "info", message: String(message), fields }),
    debug: (message, fields) => void lines.push({ level: "debug", message: String(message), fields }),
    child: () => logger,
  };
  return logger;
}

/** A dashboard served by `node:http` on a free port of 127.0.0.1, over a schema of its own. */
export interface DashboardServer {
  readonly test: TestSchema;
  /** `http://127.0.0.1:<port>` followed by the base path, without a trailing slash. */
  readonly url: string;
  readonly origin: string;
  readonly log: LoggedLine[];
  /** Stops answering (open connections are cut) but keeps the schema, as a dashboard process that went away. */
  stopServing(): Promise<void>;
  close(): Promise<void>;
}

/**
 * Creates a migrated schema and serves a dashboard over it (token auth
 * with {@link TEST_TOKEN} unless `options.auth` says otherwise).
 *
 * @example
 * ```ts
 * const server = await startDashboardServer({ readOnly: true });
 * await fetch(`${server.url}/`, { headers: { authorization: `Bearer ${TEST_TOKEN}` } });
 * ```
 */
export async function startDashboardServer(
  options: Partial<Omit<DashboardOptions, "db" | "schema" | "connectionString" | "log">> = {},
): Promise<DashboardServer> {
  const test = await createTestSchema({ prefix: "stint_dash", maxConnections: 6 });
  const log: LoggedLine[] = [];
  const dashboard = createDashboard({ auth: { token: TEST_TOKEN }, ...options, db: test.db, schema: test.schema, log: recordingLogger(log) });
  const server: Server = createServer(dashboard);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    test,
    origin,
    url: `${origin}${dashboard.basePath === "/" ? "" : dashboard.basePath}`,
    log,
    async stopServing() {
      if (!server.listening) return;
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
    async close() {
      if (server.listening) {
        server.closeAllConnections();
        await new Promise<void>((resolve) => server.close(() => resolve()));
      }
      await test.drop();
    },
  };
}
