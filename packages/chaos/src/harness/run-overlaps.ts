import { sql } from "kysely";
import type { ChaosDatabase } from "./chaos-database";
import { figures } from "./jobs";

/** What {@link runOverlaps} found in the oracle. */
export interface RunOverlaps {
  /** Handler runs recorded. */
  readonly runs: number;
  /** Runs with no recorded end (a `sleep-timed` run always records one unless its process died). */
  readonly unended: number;
  /**
   * Pairs of runs of one job where the later one started before the
   * earlier one ended (or the earlier one never recorded an end): two
   * handlers of one job running at once.
   */
  readonly overlaps: number;
}

/**
 * Looks in `chaos_executions` for two runs of one job at the same time,
 * from each run's start (the server's clock when it recorded itself) and
 * end (the local clock when the handler saw its wait end or its signal
 * abort; one machine, one clock). Meaningful for `sleep-timed` runs only.
 */
export async function runOverlaps(database: ChaosDatabase): Promise<RunOverlaps> {
  const executions = sql.id(database.schema, "chaos_executions");
  return figures(
    database.db,
    sql<{ runs: number; unended: number; overlaps: number }>`
    SELECT (SELECT count(*) FROM ${executions}) AS runs,
           (SELECT count(*) FROM ${executions} WHERE ended_at IS NULL) AS unended,
           (SELECT count(*) FROM ${executions} earlier JOIN ${executions} later
                ON later.job_id = earlier.job_id AND later.token <> earlier.token
             WHERE (later.started_at, later.attempt) > (earlier.started_at, earlier.attempt)
               AND (earlier.ended_at IS NULL OR earlier.ended_at > later.started_at)) AS overlaps`,
  );
}
