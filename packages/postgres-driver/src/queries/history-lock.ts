import { sql, type Kysely, type Transaction } from "kysely";

/**
 * How long partition upkeep waits for a lock on `finished_jobs` before it
 * gives up until the next pass. Detaching a partition takes an ACCESS
 * EXCLUSIVE lock on the table, and while it waits for one, every statement
 * that finishes a job queues behind it: this is the longest a completion
 * can wait because of retention, when something else (a long report
 * through `all_jobs`) holds the table. The work under the lock itself takes
 * milliseconds; a day's partition can wait ten minutes for the next pass.
 */
export const HISTORY_LOCK_TIMEOUT_MS = 1_000;

/**
 * Runs `work` in a transaction whose locks wait at most
 * {@link HISTORY_LOCK_TIMEOUT_MS}; resolves to `"busy"` when one did not
 * come in time (SQLSTATE 55P03, the transaction rolled back).
 *
 * ### SQL
 * ```sql
 * BEGIN;
 * SELECT set_config('lock_timeout', '1000ms', true);
 * …  -- work
 * COMMIT;
 * ```
 *
 * @example
 * ```ts
 * const created = await withHistoryLock(db, (trx) => sql`SELECT …`.execute(trx));
 * if (created === "busy") return 0; // the next pass tries again
 * ```
 */
export async function withHistoryLock<T>(db: Kysely<any>, work: (trx: Transaction<any>) => Promise<T>): Promise<T | "busy"> {
  try {
    return await db.transaction().execute(async (trx) => {
      await sql`SELECT set_config('lock_timeout', ${`${HISTORY_LOCK_TIMEOUT_MS}ms`}, true)`.execute(trx);
      return work(trx);
    });
  } catch (thrown) {
    if ((thrown as { code?: unknown }).code === "55P03") return "busy";
    throw thrown;
  }
}

/**
 * Whether another session's transaction has held a lock on `finished_jobs`
 * for longer than {@link HISTORY_LOCK_TIMEOUT_MS} (a long report, or
 * `pg_dump`, which holds every table until it ends): a detach would then
 * wait out its whole timeout, with every completion queued behind it, and
 * give up anyway, so retention does not try this pass. Sessions whose start
 * this role may not see (another role's, without `pg_read_all_stats`) do
 * not count: for them, the timeout still bounds the wait.
 *
 * ### SQL
 * ```sql
 * SELECT EXISTS (
 *   SELECT FROM pg_locks AS l JOIN pg_stat_activity AS a ON a.pid = l.pid
 *    WHERE l.locktype = 'relation' AND l.granted AND l.pid <> pg_backend_pid()
 *      AND l.relation = to_regclass(format('%I.%I', $1, 'finished_jobs'))
 *      AND a.xact_start < clock_timestamp() - $2 * interval '1 millisecond') AS held
 * ```
 *
 * @example
 * ```ts
 * if (!(await isHistoryHeld(db, "stint"))) await dropHistoryPartition(db, "stint", partition, { states }, 1_000);
 * ```
 */
export async function isHistoryHeld(executor: Kysely<any>, schema: string): Promise<boolean> {
  const { rows } = await sql<{ held: boolean }>`SELECT EXISTS (
  SELECT FROM pg_locks AS l
  JOIN pg_stat_activity AS a ON a.pid = l.pid
 WHERE l.locktype = 'relation' AND l.granted AND l.pid <> pg_backend_pid()
   AND l.relation = to_regclass(format('%I.%I', ${schema}::text, 'finished_jobs'))
   AND a.xact_start < clock_timestamp() - ${HISTORY_LOCK_TIMEOUT_MS}::integer * interval '1 millisecond'
) AS held`.execute(executor);
  return rows[0]?.held === true;
}
