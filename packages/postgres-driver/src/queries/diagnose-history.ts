import { sql, type Kysely } from "kysely";
import { isFinished } from "./active-states";
import { DAY_PARTITION_PATTERN, KEPT_PARTITION } from "./history-partitions";

/** Counts of {@link readHistory} stop here: past it, "at least" is enough for an operator. */
export const HISTORY_COUNT_CAP = 1_000_000;

/** What `finished_jobs` and its partitions hold, for `stint doctor`. */
export interface HistoryState {
  /** Rows of every partition, from `pg_class.reltuples` (as of the last ANALYZE; a never-analysed partition counts 0). */
  readonly rowsEstimate: number;
  /** Tables, indexes and TOAST of every partition, in bytes. */
  readonly totalBytes: number;
  /** Day partitions (`finished_jobs_YYYYMMDD`). */
  readonly partitions: number;
  /** The oldest day partition, or `null` when there is none. */
  readonly oldest: { readonly name: string; readonly day: string } | null;
  /** The newest day partition's day, `YYYY-MM-DD`, or `null`. */
  readonly newestDay: string | null;
  /** Days from today (UTC, database clock) to the newest partition's day; `null` without partitions. */
  readonly daysAhead: number | null;
  /** Rows in `finished_jobs_kept`, counted up to {@link HISTORY_COUNT_CAP}. */
  readonly keptRows: number;
  /** Finished rows still in `jobs` (written before migration 15, not moved yet), counted up to {@link HISTORY_COUNT_CAP}. */
  readonly legacyRows: number;
}

interface HistoryRow {
  readonly rows_estimate: string;
  readonly total_bytes: string;
  readonly partitions: string;
  readonly oldest_name: string | null;
  readonly oldest_day: string | null;
  readonly newest_day: string | null;
  readonly days_ahead: number | null;
  readonly kept_rows: string;
  readonly legacy_rows: string;
}

/**
 * The size and shape of the history: an estimate of its rows and its bytes
 * summed over the partitions (from the catalog, so it costs the same for a
 * billion rows), its day partitions (how many, the oldest, how far ahead
 * they reach), and two counts that are small in a healthy schema: the rows
 * of `finished_jobs_kept` and the finished rows still in `jobs`, each
 * counted up to {@link HISTORY_COUNT_CAP}. For a schema migrated to version
 * 15 or later.
 *
 * ### SQL
 * ```sql
 * WITH leaf AS (
 *   SELECT c.oid, c.relname, c.reltuples,
 *          to_date(substring(c.relname FROM ${DAY_PARTITION_PATTERN}::text), 'YYYYMMDD') AS day
 *     FROM pg_partition_tree(to_regclass(format('%I.%I', $1, 'finished_jobs'))) AS tree
 *     JOIN pg_class AS c ON c.oid = tree.relid
 *    WHERE tree.isleaf)
 * SELECT sum(greatest(reltuples, 0)) AS rows_estimate, sum(pg_total_relation_size(oid)) AS total_bytes,
 *        count(day) AS partitions, min(relname) FILTER (WHERE day IS NOT NULL) AS oldest_name, …,
 *        max(day) - (now() AT TIME ZONE 'UTC')::date AS days_ahead,
 *        (SELECT count(*) FROM (SELECT 1 FROM "stint"."finished_jobs_kept" LIMIT $2) AS kept) AS kept_rows,
 *        (SELECT count(*) FROM (SELECT 1 FROM "stint"."jobs"
 *                                WHERE state IN ('succeeded', 'dead', 'cancelled') LIMIT $2) AS legacy) AS legacy_rows
 *   FROM leaf
 * ```
 *
 * @example
 * ```ts
 * const history = await readHistory(db, "stint");
 * if ((history.daysAhead ?? -1) < 2) console.warn("history partitions are running out");
 * ```
 */
export async function readHistory(executor: Kysely<any>, schema: string): Promise<HistoryState> {
  const cap = sql`${HISTORY_COUNT_CAP}::integer`;
  const { rows } = await sql<HistoryRow>`WITH leaf AS (
  SELECT c.oid, c.relname, c.reltuples,
         to_date(substring(c.relname FROM ${DAY_PARTITION_PATTERN}::text), 'YYYYMMDD') AS day
    FROM pg_partition_tree(to_regclass(format('%I.%I', ${schema}::text, 'finished_jobs'))) AS tree
    JOIN pg_class AS c ON c.oid = tree.relid
   WHERE tree.isleaf
)
SELECT coalesce(sum(greatest(leaf.reltuples, 0)), 0)::bigint AS rows_estimate,
       coalesce(sum(pg_total_relation_size(leaf.oid)), 0)::bigint AS total_bytes,
       count(leaf.day) AS partitions,
       min(leaf.relname) FILTER (WHERE leaf.day IS NOT NULL) AS oldest_name,
       to_char(min(leaf.day), 'YYYY-MM-DD') AS oldest_day,
       to_char(max(leaf.day), 'YYYY-MM-DD') AS newest_day,
       max(leaf.day) - (now() AT TIME ZONE 'UTC')::date AS days_ahead,
       (SELECT count(*) FROM (SELECT 1 FROM ${sql.id(schema, KEPT_PARTITION)} LIMIT ${cap}) AS kept) AS kept_rows,
       (SELECT count(*) FROM (SELECT 1 FROM ${sql.id(schema, "jobs")}
                               WHERE ${isFinished()} LIMIT ${cap}) AS legacy) AS legacy_rows
  FROM leaf`.execute(executor);
  const row = rows[0]!;
  return Object.freeze({
    rowsEstimate: Number(row.rows_estimate),
    totalBytes: Number(row.total_bytes),
    partitions: Number(row.partitions),
    oldest: row.oldest_name === null || row.oldest_day === null ? null : Object.freeze({ name: row.oldest_name, day: row.oldest_day }),
    newestDay: row.newest_day,
    daysAhead: row.days_ahead,
    keptRows: Number(row.kept_rows),
    legacyRows: Number(row.legacy_rows),
  });
}
