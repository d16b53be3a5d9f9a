import { applicationName } from "@stint/core/internal";
import { SessionCheck, type SessionKind } from "./connection/session-check";

/** Where `stint doctor` connects, for its `connection` check. */
export interface ConnectionToDiagnose {
  /** The connection string of the pools (`DATABASE_URL`). */
  readonly connectionString: string;
  /** `STINT_SESSION_DATABASE_URL`, when set: where LISTEN and the leader lock go instead. */
  readonly sessionConnectionString?: string;
}

/** The `connection` check's verdict, before it is put in a `DiagnosisCheck`. */
export interface ConnectionFinding {
  readonly ok: boolean;
  readonly detail: string;
}

/**
 * Tells a direct connection from a session pooler and a transaction
 * pooler (see `SessionCheck`), for the main connection string and, when
 * it is set, the session one; says what stint does there and names the
 * two settings that change it. Behind a transaction pooler without a
 * session URL that keeps sessions, the finding is not ok: everything
 * works, but workers poll instead of being woken.
 *
 * @example
 * ```ts
 * const { ok, detail } = await diagnoseConnection({ connectionString: process.env.DATABASE_URL! });
 * ```
 */
export async function diagnoseConnection(target: ConnectionToDiagnose): Promise<ConnectionFinding> {
  const main = await kindOf(target.connectionString);
  if (main !== "transaction-pooler")
    return { ok: true, detail: `${describe(main)}: named prepared statements, LISTEN wake-ups and the leader's advisory lock work` };
  const pooler =
    `a transaction pooler (such as PgBouncer in pool_mode=transaction): statements go unnamed ` +
    `(STINT_PREPARED_STATEMENTS=auto switches by itself at the first clash; off starts that way)`;
  if (target.sessionConnectionString === undefined) {
    return {
      ok: false,
      detail: `${pooler}; LISTEN and session locks cannot work through it, so workers poll and the leader holds a lease row — set STINT_SESSION_DATABASE_URL to a direct connection for wake-ups`,
    };
  }
  const session = await kindOf(target.sessionConnectionString);
  if (session === "transaction-pooler") {
    return { ok: false, detail: `${pooler}; STINT_SESSION_DATABASE_URL is a transaction pooler too — point it at PostgreSQL itself or a session-mode pool` };
  }
  return { ok: true, detail: `${pooler}; wake-ups and the leader lock use STINT_SESSION_DATABASE_URL, ${describe(session)}` };
}

function kindOf(connectionString: string): Promise<SessionKind> {
  return new SessionCheck({ connectionString, applicationName: applicationName("doctor"), onWarning: () => undefined }).kind();
}

function describe(kind: SessionKind): string {
  return kind === "direct" ? "a direct connection to PostgreSQL" : "a session pooler (one server connection per client session)";
}
