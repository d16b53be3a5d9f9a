import pg from "pg";
import type { WarningListener } from "./driver-warning";

/** How PgBouncer (and poolers like it) refuse a startup parameter they do not pass on. */
const REFUSED_TIMEOUT = /unsupported startup parameter:?\s*"?statement_timeout/i;

/**
 * The `statement_timeout` a pool's connections ask for in their startup
 * packet, and the one fallback a pooler can force. PgBouncer refuses a
 * connection whose startup packet carries a parameter it does not know
 * (`unsupported startup parameter: statement_timeout`) unless it was told
 * to ignore it; after the first such refusal, the pool's new connections
 * leave the parameter out (said once). The client's read timeout still
 * bounds every statement; the server's timeout can be set on the role.
 *
 * @example
 * ```ts
 * const startup = new StartupSettings(30_000, emitProcessWarning);
 * const pool = new pg.Pool({ connectionString, Client: startup.clientClass(), statement_timeout: 30_000 });
 * ```
 */
export class StartupSettings {
  readonly #statementTimeoutMs: number;
  readonly #warn: WarningListener;
  #refused = false;

  constructor(statementTimeoutMs: number, warn: WarningListener) {
    this.#statementTimeoutMs = statementTimeoutMs;
    this.#warn = warn;
  }

  /** Whether a pooler refused the parameter, so connections go without it. */
  get statementTimeoutRefused(): boolean {
    return this.#refused;
  }

  /** The pg client class for the pool: its connections send `statement_timeout` until a pooler refused it. */
  clientClass(): typeof pg.Client {
    const refused = (): boolean => this.#refused;
    return class StartupClient extends pg.Client {
      constructor(config?: string | pg.ClientConfig) {
        super(refused() && typeof config === "object" ? { ...config, statement_timeout: undefined } : config);
      }
    };
  }

  /**
   * True when `error` (a failed connect) is a pooler refusing the timeout
   * parameter: from now on connections leave it out, and the caller
   * connects again.
   */
  refusedBy(error: unknown): boolean {
    if (this.#statementTimeoutMs === 0 || !(error instanceof Error) || !REFUSED_TIMEOUT.test(error.message)) return false;
    if (!this.#refused) {
      this.#refused = true;
      this.#warn({
        code: "STINT_NO_STATEMENT_TIMEOUT",
        message:
          `The server refused the startup parameter statement_timeout (${error.message}), as PgBouncer does unless told to ignore it: ` +
          `this pool connects without it, so PostgreSQL does not stop its statements after ${this.#statementTimeoutMs} ms ` +
          `(the client still gives up on an answer that takes too long). Set the timeout on the role instead: ALTER ROLE … SET statement_timeout = '${this.#statementTimeoutMs}ms'.`,
      });
    }
    return true;
  }
}
