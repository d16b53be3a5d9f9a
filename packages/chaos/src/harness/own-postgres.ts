import { ThrowawayPostgres } from "@stint/throwaway-postgres";

/** Servers started and not yet stopped, so an interrupted suite can stop them. */
const RUNNING = new Set<ThrowawayPostgres>();

/**
 * Starts a PostgreSQL server the suite owns (a {@link ThrowawayPostgres}),
 * so that a scenario can restart it with `pg_ctl restart -m fast` or
 * `-m immediate`. Stop it with `stop()`; Ctrl-C stops it through
 * {@link stopAllOwnServers}.
 *
 * @example
 * const server = await startOwnPostgres();
 * try { await server.restart("immediate"); } finally { await server.stop(); }
 */
export async function startOwnPostgres(): Promise<ThrowawayPostgres> {
  const server = await ThrowawayPostgres.start({
    prefix: "stint-chaos-pg-",
    settings: { max_connections: 200 },
    onNotice: (line) => process.stderr.write(`chaos: ${line}\n`),
  });
  RUNNING.add(server);
  return server;
}

/** Stops every server the suite started (on Ctrl-C). */
export async function stopAllOwnServers(): Promise<void> {
  await Promise.all([...RUNNING].map((server) => server.stop()));
  RUNNING.clear();
}
