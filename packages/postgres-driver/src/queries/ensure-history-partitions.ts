import { sql, type Kysely } from "kysely";
import { HISTORY_DAYS_AHEAD } from "../schema/migrations/0015-finished-jobs";
import { withHistoryLock } from "./history-lock";

/**
 * Creates the missing day partitions of `finished_jobs` from today (UTC, on
 * the database clock) to {@link HISTORY_DAYS_AHEAD} days ahead, and returns
 * how many it created: usually none, and one a day. Without them, jobs that
 * finish on a day with no partition land in `finished_jobs_kept`, which
 * retention can only prune row by row. `ensure_history_partitions` runs
 * with its owner's rights, so the runtime role, which may not create
 * tables, can call it.
 *
 * Attaching a partition locks `finished_jobs_kept` (whose range shrinks)
 * until the transaction ends, so this waits at most
 * `HISTORY_LOCK_TIMEOUT_MS` for it and returns 0 when it did not come in
 * time: the partitions are a week ahead, the next pass makes them.
 *
 * ### SQL
 * ```sql
 * BEGIN;
 * SELECT set_config('lock_timeout', '1000ms', true);
 * SELECT "stint".ensure_history_partitions(today, today + 7) AS created
 *   FROM (SELECT (now() AT TIME ZONE 'UTC')::date AS today) AS clock;
 * COMMIT;
 * ```
 *
 * @example
 * ```ts
 * await ensureHistoryPartitions(db, "stint"); // at a worker's start, and on each retention pass
 * ```
 */
export async function ensureHistoryPartitions(db: Kysely<any>, schema: string): Promise<number> {
  const created = await withHistoryLock(db, async (trx) => {
    const { rows } = await sql<{
      created: number;
    }>`SELECT ${sql.id(schema, "ensure_history_partitions")}(today, today + ${HISTORY_DAYS_AHEAD}::integer) AS created
  FROM (SELECT (now() AT TIME ZONE 'UTC')::date AS today) AS clock`.execute(trx);
    return Number(rows[0]?.created ?? 0);
  });
  return created === "busy" ? 0 : created;
}
