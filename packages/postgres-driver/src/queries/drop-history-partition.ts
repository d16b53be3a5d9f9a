import { sql, type Kysely } from "kysely";
import { attemptsTable } from "./attempt-history";
import { jobLogsTable } from "./list-job-logs";
import { withHistoryLock } from "./history-lock";
import { listDetachedDays, type HistoryPartition } from "./history-partitions";
import { sparedQueues, type RetentionPass } from "./retention-plan";

/**
 * Drops a day partition of `finished_jobs` whose whole day is past the
 * cutoff of a pass deleting `states`, and returns how many of its jobs went
 * (those in `states`, but not of `exceptQueues`; the others are kept), or `"busy"` when the lock did
 * not come in time — nothing was dropped, the next pass tries again.
 *
 * In three steps: outside any lock, in statements of at most `batch` jobs,
 * the attempt history, `job_waiters` rows and `ctx.log` lines of the jobs
 * that go (`dead_hooks` rows stay: their claim deletes them); then one short
 * transaction, waiting at most `HISTORY_LOCK_TIMEOUT_MS`, that detaches the
 * partition and copies back the rows of other states
 * (`detach_history_partition`); last, `drop_detached_history` drops the
 * detached table in a transaction of its own, so completions never wait for
 * its files to be freed. A table left detached by a process that stopped
 * in between is dropped by the next pass (`dropLeftoverDays`). Why each
 * step is shaped so: docs/schema.md, "Dropping a day of history".
 *
 * @example
 * ```ts
 * const gone = await dropHistoryPartition(db, "stint", { name: "finished_jobs_20250301", day: "2025-03-01" }, { states: ["succeeded", "cancelled"] }, 1_000);
 * ```
 */
export async function dropHistoryPartition(
  db: Kysely<any>,
  schema: string,
  partition: HistoryPartition,
  pass: Pick<RetentionPass, "states" | "exceptQueues">,
  batch: number,
): Promise<number | "busy"> {
  const table = sql.id(schema, partition.name);
  const wanted = sql`${[...pass.states]}::text[]`;
  const spared = [...(pass.exceptQueues ?? [])];
  // The jobs that go: of the pass's states, and not of the queues it spares (the partition's rows carry no alias here).
  const going = sql`state = ANY(${wanted}) ${sparedQueues(pass)}`;
  const { rows: counted } = await sql<{ n: string }>`SELECT count(*) AS n FROM ${table} WHERE ${going}`.execute(db);
  for (let after = "0"; ;) {
    const { rows } = await sql<{ last: string | null; seen: string }>`WITH batch AS (
  SELECT id FROM ${table}
   WHERE id > ${after}::bigint AND ${going} AND (state <> 'succeeded' OR attempts > 1)
   ORDER BY id
   LIMIT ${batch}::integer
),
history AS (
  DELETE FROM ${attemptsTable(schema)} WHERE job_id = ANY(ARRAY(SELECT id FROM batch))
)
SELECT max(id) AS last, count(*) AS seen FROM batch`.execute(db);
    if (Number(rows[0]?.seen ?? 0) < batch || rows[0]?.last == null) break;
    after = rows[0].last;
  }
  const waiters = sql.id(schema, "job_waiters");
  for (;;) {
    const { numAffectedRows } = await sql`WITH gone AS (
  SELECT w.job_id, w.waiter FROM ${waiters} AS w
   WHERE EXISTS (SELECT FROM ${table} AS p WHERE p.id = w.job_id AND ${going})
   LIMIT ${batch}::integer
)
DELETE FROM ${waiters} AS w USING gone WHERE w.job_id = gone.job_id AND w.waiter = gone.waiter`.execute(db);
    if (Number(numAffectedRows ?? 0) < batch) break;
  }
  // Handler logs, by the partition's id range (a range of job_logs_pkey): every job in it, first attempts that succeeded included.
  const logs = jobLogsTable(schema);
  for (;;) {
    const { numAffectedRows } = await sql`WITH span AS (
  SELECT min(id) AS low, max(id) AS high FROM ${table}
),
gone AS (
  SELECT l.job_id, l.attempt FROM ${logs} AS l, span
   WHERE l.job_id BETWEEN span.low AND span.high
     AND EXISTS (SELECT FROM ${table} AS p WHERE p.id = l.job_id AND ${going})
   LIMIT ${batch}::integer
)
DELETE FROM ${logs} AS l USING gone WHERE l.job_id = gone.job_id AND l.attempt = gone.attempt`.execute(db);
    if (Number(numAffectedRows ?? 0) < batch) break;
  }
  const kept = await withHistoryLock(db, async (trx) => {
    const { rows } = await sql<{
      kept: number | null;
    }>`SELECT ${sql.id(schema, "detach_history_partition")}(${partition.day}::date, ${wanted}${
      spared.length === 0 ? sql`` : sql`, ${spared}::text[]`
    }) AS kept`.execute(trx);
    return rows[0]?.kept ?? null;
  });
  if (kept === "busy") return "busy";
  // null: another process detached it first, and counts its jobs.
  if (kept === null) return 0;
  await dropDetachedDay(db, schema, partition);
  return Number(counted[0]?.n ?? 0);
}

/**
 * Drops the day tables that were detached but not dropped (see
 * {@link dropHistoryPartition}); returns how many.
 *
 * ### SQL
 * ```sql
 * -- for each table listDetachedDays finds:
 * SELECT "stint".drop_detached_history('2025-03-01'::date);
 * ```
 *
 * @example
 * ```ts
 * await dropLeftoverDays(db, "stint"); // 0, unless a process stopped in the middle of a drop
 * ```
 */
export async function dropLeftoverDays(db: Kysely<any>, schema: string): Promise<number> {
  const leftovers = await listDetachedDays(db, schema);
  for (const leftover of leftovers) await dropDetachedDay(db, schema, leftover);
  return leftovers.length;
}

async function dropDetachedDay(db: Kysely<any>, schema: string, day: HistoryPartition): Promise<void> {
  await sql`SELECT ${sql.id(schema, "drop_detached_history")}(${day.day}::date)`.execute(db);
}
