import { sql } from "kysely";
import type { Migration } from "./migration";

/** Days of history partitions the migration creates ahead of today (and maintenance keeps ahead). */
export const HISTORY_DAYS_AHEAD = 7;

/**
 * Version 15: finished jobs leave `jobs` for `finished_jobs`, a table
 * partitioned by `finished_at`, one partition per UTC day
 * (`finished_jobs_YYYYMMDD`) and a default partition, `finished_jobs_kept`,
 * for rows that outlive their day's partition (dead jobs kept longer than
 * succeeded ones) or that finished on a day without a partition. Every
 * statement that finishes a job moves it there in the same statement, so
 * `jobs` holds only what is queued, running or failed, and its pages, its
 * indexes and its vacuum stay the size of the work in flight however much
 * history is kept. Retention drops whole partitions.
 *
 * `finished_jobs` has the same columns as `jobs`, in the same order; a later
 * migration that adds a column to one adds it to the other and recreates
 * `all_jobs`, the view of both that operators query.
 *
 * `ensure_history_partitions(first_day, last_day)` creates the missing day
 * partitions of a range (moving any rows of those days out of the kept
 * partition first) and returns how many it created; it runs with its
 * owner's rights, so a worker role that may not create tables can still
 * keep partitions ahead. How long it may wait for a lock is its caller's
 * `lock_timeout` (`ensureHistoryPartitions` gives it one second; attaching
 * takes the parent's schema-change lock, which only other schema changes
 * and `VACUUM`/`ANALYZE` of the parent hold); rows of a day without a
 * partition land in the kept partition meanwhile. Finished rows already in `jobs` stay there, where
 * every reader finds them, until `stint migrate` (or the maintenance
 * leader) moves them in batches.
 */
export const finishedJobsMigration: Migration = Object.freeze({
  version: 15,
  name: "finished-jobs",
  statements: (schema: string) => {
    const finished = sql.id(schema, "finished_jobs");
    const ensure = sql.id(schema, "ensure_history_partitions");
    return [
      sql`CREATE TABLE ${finished} (LIKE ${sql.id(schema, "jobs")} INCLUDING DEFAULTS INCLUDING CONSTRAINTS,
  CONSTRAINT finished_jobs_state_check CHECK (state IN ('succeeded', 'dead', 'cancelled')),
  CONSTRAINT finished_jobs_finished_at_check CHECK (finished_at IS NOT NULL)
) PARTITION BY RANGE (finished_at)`,
      sql`CREATE TABLE ${sql.id(schema, "finished_jobs_kept")} PARTITION OF ${finished} DEFAULT`,
      sql`CREATE INDEX finished_jobs_id_idx ON ${finished} (id)`,
      sql`CREATE INDEX finished_jobs_dead_idx ON ${finished} (state, finished_at) INCLUDE (queue) WHERE state IN ('dead', 'cancelled')`,
      // Summarised as each range fills, so a time window reads only its own ranges, not every range since the last vacuum.
      sql`CREATE INDEX finished_jobs_finished_at_idx ON ${finished} USING brin (finished_at) WITH (autosummarize = on)`,
      sql`CREATE FUNCTION ${ensure}(first_day date, last_day date) RETURNS integer
LANGUAGE plpgsql VOLATILE STRICT SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $function$
DECLARE
  day date;
  part text;
  low timestamptz;
  high timestamptz;
  created integer := 0;
BEGIN
  IF NOT (isfinite(first_day) AND isfinite(last_day)) OR last_day - first_day > 3660 THEN
    RAISE EXCEPTION 'ensure_history_partitions takes two finite days at most ten years apart, got % and %', first_day, last_day
      USING ERRCODE = '22023';
  END IF;
  -- The common call finds every partition there and takes no lock; otherwise callers take turns, so two
  -- processes that start on a new day never race to create the same partition.
  IF NOT EXISTS (
    SELECT FROM generate_series(first_day::timestamp, last_day::timestamp, interval '1 day') AS d
     WHERE to_regclass(format('%I.%I', ${sql.lit(schema)}, 'finished_jobs_' || to_char(d, 'YYYYMMDD'))) IS NULL
  ) THEN
    RETURN 0;
  END IF;
  PERFORM pg_advisory_xact_lock(hashtext(${sql.lit(schema)} || '.finished_jobs'));
  FOR day IN SELECT d::date FROM generate_series(first_day::timestamp, last_day::timestamp, interval '1 day') AS d LOOP
    part := 'finished_jobs_' || to_char(day, 'YYYYMMDD');
    CONTINUE WHEN to_regclass(format('%I.%I', ${sql.lit(schema)}, part)) IS NOT NULL;
    low := day::timestamp AT TIME ZONE 'UTC';
    high := (day + 1)::timestamp AT TIME ZONE 'UTC';
    -- A partition is attached, not created in place: attaching locks the parent only against other schema
    -- changes, so the statements that finish jobs (inserting into the parent) never wait for it.
    EXECUTE format('CREATE TABLE %I.%I (LIKE %I.finished_jobs INCLUDING DEFAULTS INCLUDING CONSTRAINTS)', ${sql.lit(schema)}, part, ${sql.lit(schema)});
    EXECUTE format('ALTER TABLE %I.%I ADD CONSTRAINT %I CHECK (finished_at >= %L AND finished_at < %L)',
                   ${sql.lit(schema)}, part, part || '_range', low, high);
    EXECUTE format('WITH moved AS (DELETE FROM %I.finished_jobs_kept WHERE finished_at >= $1 AND finished_at < $2 RETURNING *)
                    INSERT INTO %I.%I SELECT * FROM moved', ${sql.lit(schema)}, ${sql.lit(schema)}, part) USING low, high;
    EXECUTE format('ALTER TABLE %I.finished_jobs ATTACH PARTITION %I.%I FOR VALUES FROM (%L) TO (%L)',
                   ${sql.lit(schema)}, ${sql.lit(schema)}, part, low, high);
    created := created + 1;
  END LOOP;
  RETURN created;
END
$function$`,
      sql`SELECT ${ensure}((now() AT TIME ZONE 'UTC')::date - 1, (now() AT TIME ZONE 'UTC')::date + ${sql.lit(HISTORY_DAYS_AHEAD)})`,
      sql`CREATE VIEW ${sql.id(schema, "all_jobs")} AS
  SELECT * FROM ${sql.id(schema, "jobs")}
  UNION ALL
  SELECT * FROM ${finished}`,
      // Retention's drop, in two steps. First detach a past day's partition and put back the rows of states it
      // must keep (through the parent, so into finished_jobs_kept: their day has no partition any more); this holds
      // finished_jobs locked until the caller commits, so it does nothing else. Returns how many it put back, or
      // NULL when the day has no partition. Only days before today: today's partition takes today's completions.
      sql`CREATE FUNCTION ${sql.id(schema, "detach_history_partition")}(day date, doomed text[]) RETURNS integer
LANGUAGE plpgsql VOLATILE STRICT SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $function$
DECLARE
  part text := 'finished_jobs_' || to_char(day, 'YYYYMMDD');
  kept integer;
BEGIN
  IF day >= (now() AT TIME ZONE 'UTC')::date THEN
    RAISE EXCEPTION 'history partition % is not in the past: only days before today are dropped', part USING ERRCODE = '22023';
  END IF;
  IF NOT EXISTS (SELECT FROM pg_inherits
                  WHERE inhrelid = to_regclass(format('%I.%I', ${sql.lit(schema)}, part))
                    AND inhparent = format('%I.finished_jobs', ${sql.lit(schema)})::regclass) THEN
    RETURN NULL;
  END IF;
  EXECUTE format('ALTER TABLE %I.finished_jobs DETACH PARTITION %I.%I', ${sql.lit(schema)}, ${sql.lit(schema)}, part);
  IF 'succeeded' = ANY(doomed) THEN
    -- What stays is dead or cancelled: read through the partition's copy of finished_jobs_dead_idx, not a scan.
    EXECUTE format('INSERT INTO %I.finished_jobs SELECT * FROM %I.%I WHERE state IN (''dead'', ''cancelled'') AND state <> ALL($1)',
                   ${sql.lit(schema)}, ${sql.lit(schema)}, part) USING doomed;
  ELSE
    EXECUTE format('INSERT INTO %I.finished_jobs SELECT * FROM %I.%I WHERE state <> ALL($1)',
                   ${sql.lit(schema)}, ${sql.lit(schema)}, part) USING doomed;
  END IF;
  GET DIAGNOSTICS kept = ROW_COUNT;
  RETURN kept;
END
$function$`,
      // Then drop the detached table, in a transaction of its own: freeing a large partition's files at commit takes
      // long enough (see docs/benchmarks.md, Figures behind the code) that it must not happen under the lock on
      // finished_jobs. Refuses a table that is still a partition. Returns whether there was a table to drop.
      sql`CREATE FUNCTION ${sql.id(schema, "drop_detached_history")}(day date) RETURNS boolean
LANGUAGE plpgsql VOLATILE STRICT SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $function$
DECLARE
  part text := 'finished_jobs_' || to_char(day, 'YYYYMMDD');
  detached regclass := to_regclass(format('%I.%I', ${sql.lit(schema)}, part));
BEGIN
  IF detached IS NULL THEN
    RETURN false;
  END IF;
  IF (SELECT relispartition OR relkind <> 'r' FROM pg_class WHERE oid = detached) THEN
    RAISE EXCEPTION 'history partition % is still attached: detach it first', part USING ERRCODE = '55006';
  END IF;
  EXECUTE format('DROP TABLE %I.%I', ${sql.lit(schema)}, part);
  RETURN true;
END
$function$`,
    ];
  },
});
