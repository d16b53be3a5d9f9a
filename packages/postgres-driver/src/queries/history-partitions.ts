import { sql, type Kysely } from "kysely";
import { millisecondsInterval } from "./job-row";

/** The default partition of `finished_jobs`: rows that outlived their day's partition, or finished on a day without one. */
export const KEPT_PARTITION = "finished_jobs_kept";

/**
 * The name of a day partition of `finished_jobs` (`finished_jobs_YYYYMMDD`,
 * as `ensure_history_partitions` names them), its day captured: a
 * POSIX regular expression, sent as a parameter.
 */
export const DAY_PARTITION_PATTERN = "^finished_jobs_([0-9]{8})$";

/** One day partition of `finished_jobs`. */
export interface HistoryPartition {
  /** `finished_jobs_YYYYMMDD`. */
  readonly name: string;
  /** Its UTC day, `YYYY-MM-DD`: it holds the jobs that finished from that midnight to the next. */
  readonly day: string;
}

/**
 * The day partitions of `finished_jobs` whose whole day ended before
 * `now() - olderThanMs`, oldest first: the ones a retention pass with that
 * cutoff may drop. Read from the catalog (`pg_inherits`), so it costs the
 * same however many rows they hold; a day is read from the partition's
 * name, which `ensure_history_partitions` gives it.
 *
 * ### SQL
 * ```sql
 * SELECT c.relname AS name, to_char(part.day, 'YYYY-MM-DD') AS day
 *   FROM pg_inherits AS i JOIN pg_class AS c ON c.oid = i.inhrelid
 *  CROSS JOIN LATERAL (SELECT to_date(substring(c.relname FROM '^finished_jobs_([0-9]{8})$'), 'YYYYMMDD') AS day) AS part
 *  WHERE i.inhparent = to_regclass(format('%I.%I', $1, 'finished_jobs'))
 *    AND (part.day + 1)::timestamp AT TIME ZONE 'UTC' <= now() - $2 * interval '1 millisecond'
 *  ORDER BY part.day
 * ```
 *
 * @example
 * ```ts
 * const week = 7 * 86_400_000;
 * for (const { name, day } of await listExpiredPartitions(db, "stint", week)) console.log(name, day);
 * ```
 */
export async function listExpiredPartitions(executor: Kysely<any>, schema: string, olderThanMs: number): Promise<readonly HistoryPartition[]> {
  const { rows } = await sql<HistoryPartition>`SELECT c.relname AS name, to_char(part.day, 'YYYY-MM-DD') AS day
  FROM pg_inherits AS i
  JOIN pg_class AS c ON c.oid = i.inhrelid
 CROSS JOIN LATERAL (SELECT to_date(substring(c.relname FROM ${DAY_PARTITION_PATTERN}::text), 'YYYYMMDD') AS day) AS part
 WHERE i.inhparent = to_regclass(format('%I.%I', ${schema}::text, 'finished_jobs'))
   AND (part.day + 1)::timestamp AT TIME ZONE 'UTC' <= now() - ${millisecondsInterval(olderThanMs)}
 ORDER BY part.day`.execute(executor);
  return Object.freeze(rows.map((row) => Object.freeze({ name: row.name, day: row.day })));
}

/**
 * Day tables of `finished_jobs` that were detached but not dropped (a
 * process stopped between the two steps of `dropHistoryPartition`): their
 * jobs are gone from the history already, their files are not. Read from
 * the catalog: tables named `finished_jobs_YYYYMMDD` that are no partition.
 *
 * ### SQL
 * ```sql
 * SELECT c.relname AS name, to_char(to_date(substring(c.relname FROM '^finished_jobs_([0-9]{8})$'), 'YYYYMMDD'), 'YYYY-MM-DD') AS day
 *   FROM pg_class AS c JOIN pg_namespace AS n ON n.oid = c.relnamespace
 *  WHERE n.nspname = $1 AND c.relkind = 'r' AND NOT c.relispartition AND c.relname ~ '^finished_jobs_[0-9]{8}$'
 *  ORDER BY c.relname
 * ```
 *
 * @example
 * ```ts
 * for (const leftover of await listDetachedDays(db, "stint")) await dropDetachedDay(db, "stint", leftover);
 * ```
 */
export async function listDetachedDays(executor: Kysely<any>, schema: string): Promise<readonly HistoryPartition[]> {
  const { rows } = await sql<HistoryPartition>`SELECT c.relname AS name,
       to_char(to_date(substring(c.relname FROM ${DAY_PARTITION_PATTERN}::text), 'YYYYMMDD'), 'YYYY-MM-DD') AS day
  FROM pg_class AS c
  JOIN pg_namespace AS n ON n.oid = c.relnamespace
 WHERE n.nspname = ${schema} AND c.relkind = 'r' AND NOT c.relispartition AND c.relname ~ ${DAY_PARTITION_PATTERN}::text
 ORDER BY c.relname`.execute(executor);
  return Object.freeze(rows.map((row) => Object.freeze({ name: row.name, day: row.day })));
}
