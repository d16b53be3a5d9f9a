import pg from "pg";

/** How {@link openSessionClient} connects, and whom it tells that the connection is gone. */
export interface SessionClientParts {
  readonly connectionString: string;
  readonly applicationName: string;
  readonly connectTimeoutMs: number;
  /** pg's `query_timeout` of every statement on it. */
  readonly queryTimeoutMs: number;
  /** The connection failed (with its error) or ended (without one), after it was open. */
  readonly onLost: (client: pg.Client, error: Error | undefined) => void;
}

/**
 * Opens one dedicated `pg.Client` (never from a pool) with TCP keep-alive,
 * tells `onLost` when it fails or ends, and ends it again when the connect
 * itself fails (rejecting with that failure).
 *
 * @example
 * ```ts
 * const client = await openSessionClient({ connectionString, applicationName, connectTimeoutMs: 10_000, queryTimeoutMs: 2_000,
 *   onLost: (lost) => forget(lost) });
 * ```
 */
export async function openSessionClient(parts: SessionClientParts): Promise<pg.Client> {
  const client = new pg.Client({
    connectionString: parts.connectionString,
    application_name: parts.applicationName,
    keepAlive: true,
    connectionTimeoutMillis: parts.connectTimeoutMs,
    query_timeout: parts.queryTimeoutMs,
  });
  client.on("error", (error) => parts.onLost(client, error));
  client.on("end", () => parts.onLost(client, undefined));
  try {
    await client.connect();
  } catch (thrown) {
    await client.end().catch(() => undefined);
    throw thrown;
  }
  return client;
}
