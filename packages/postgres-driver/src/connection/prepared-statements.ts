import type { DriverWarning, WarningListener } from "./driver-warning";
import type { Statement } from "./statement";

/**
 * Whether hot statements are sent as named prepared statements:
 *
 * - `"auto"` (the default): named while that works; the first sign of a
 *   transaction pooler switches the pool to unnamed statements for good
 *   (see {@link PreparedStatements.fallsBack});
 * - `"on"`: always named; a pooler's refusal is an error;
 * - `"off"`: never named (every statement parsed and planned each time).
 */
export type PreparedStatementsMode = "auto" | "on" | "off";

/** The modes, for checks and messages. */
export const PREPARED_STATEMENTS_MODES: readonly PreparedStatementsMode[] = Object.freeze(["auto", "on", "off"]);

/**
 * SQLSTATEs a named statement fails with when a transaction pooler hands
 * its client's statements to different server connections: `42P05` (the
 * name is already prepared on this server connection, by another client)
 * and `26000` (it was prepared on another one). Either way the statement
 * never ran: the failure is at its parse or bind.
 */
const POOLER_SQLSTATES = new Set(["42P05", "26000"]);

/** True for an error that says a named statement met a server connection that does not match its client. */
export function isPreparedStatementClash(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" && POOLER_SQLSTATES.has(code);
}

/**
 * One pool's prepared-statement mode, and the switch `"auto"` makes. Owned
 * by a {@link StatementRunner}; nothing else names statements.
 *
 * @example
 * ```ts
 * const prepared = new PreparedStatements("auto", emitProcessWarning);
 * const name = prepared.nameOf(statement); // statement.name, until a pooler is seen
 * ```
 */
export class PreparedStatements {
  readonly #mode: PreparedStatementsMode;
  readonly #warn: WarningListener;
  #named: boolean;

  constructor(mode: PreparedStatementsMode, warn: WarningListener) {
    this.#mode = mode;
    this.#warn = warn;
    this.#named = mode !== "off";
  }

  /** The mode it was set to. */
  get mode(): PreparedStatementsMode {
    return this.#mode;
  }

  /** Whether statements are sent named now (false once `"auto"` fell back). */
  get named(): boolean {
    return this.#named;
  }

  /** The name to send `statement` under now, or `undefined` to send it unnamed. */
  nameOf(statement: Statement): string | undefined {
    return this.#named ? statement.name : undefined;
  }

  /**
   * Called with the error of a statement sent named. True when the error
   * is a pooler's clash and the mode is `"auto"`: statements are unnamed
   * from now on (said once), and the caller sends this one again, unnamed.
   */
  fallsBack(error: unknown): boolean {
    if (this.#mode !== "auto" || !isPreparedStatementClash(error)) return false;
    if (this.#named) {
      this.#named = false;
      this.#warn(fellBack(error));
    }
    return true;
  }
}

function fellBack(error: unknown): DriverWarning {
  const { code, message } = error as { code: string; message: string };
  return {
    code: "STINT_UNNAMED_STATEMENTS",
    message:
      `A prepared statement failed with SQLSTATE ${code} (${message}), the sign of a transaction pooler such as PgBouncer ` +
      `in pool_mode=transaction: this pool sends its statements unnamed from now on, and no statement was lost. ` +
      `Set STINT_PREPARED_STATEMENTS=off (the preparedStatements option) to start that way, or =on to keep them named.`,
  };
}
