import type { NewJob } from "@stint/core/driver";
import { sql, type RawBuilder } from "kysely";
import { insertStatement, type EnqueueRow } from "./enqueue";
import { millisecondsInterval } from "./job-row";
import { joinNotifying } from "./notify-job-events";

/**
 * The enqueue statement of a job with a unique window (`unique: { key,
 * forMs }`): one probe of `unique_windows`' primary key, never a read of
 * the jobs or their history.
 *
 * An id is drawn first; the window row is inserted with it, or, when the
 * key's window has closed, takes it over (`ON CONFLICT … DO UPDATE … WHERE
 * until <= now()`); the job is inserted only when the window row names its
 * id. An open window is found by the lookup instead, and its first job is
 * returned as a duplicate, whatever state that job is in. Concurrent
 * enqueues of one key wait for each other on the window row; one that
 * waited, and whose snapshot predates the winner's commit, finds neither
 * and returns nothing, and `enqueue` runs it again.
 *
 * ```sql
 * WITH fresh AS MATERIALIZED (SELECT nextval('"stint".jobs_id_seq'::regclass) AS id),
 * opened AS (INSERT INTO "stint".unique_windows AS w (queue, key, job_id, until) SELECT $1, $2, id, now() + … FROM fresh
 *            ON CONFLICT (queue, key) DO UPDATE SET job_id = excluded.job_id, until = excluded.until WHERE w.until <= now()
 *            RETURNING job_id),
 * inserted AS (INSERT INTO "stint".jobs (id, …) SELECT fresh.id, … FROM fresh JOIN opened ON opened.job_id = fresh.id RETURNING id, queue)
 * SELECT id, false AS duplicate FROM inserted
 * UNION ALL
 * SELECT job_id, true FROM "stint".unique_windows WHERE queue = $1 AND key = $2 AND until > now() AND NOT EXISTS (SELECT FROM opened)
 * ```
 *
 * @example
 * ```ts
 * const statement = enqueueInWindowStatement("stint", slots); // compiled once, like the other enqueue variants
 * ```
 */
export function enqueueInWindowStatement(schema: string, job: NewJob): RawBuilder<EnqueueRow> {
  const windows = sql.id(schema, "unique_windows");
  const unique = job.unique!;
  const insert = insertStatement(schema, job, { id: sql`fresh.id`, from: sql`FROM fresh JOIN opened ON opened.job_id = fresh.id` });
  return sql<EnqueueRow>`WITH fresh AS MATERIALIZED (
  SELECT nextval(${sql.lit(`"${schema}".jobs_id_seq`)}::regclass) AS id
),
opened AS (
  INSERT INTO ${windows} AS w (queue, key, job_id, until)
  SELECT ${job.queue}::text, ${unique.key}::text, fresh.id, now() + ${millisecondsInterval(unique.forMs)} FROM fresh
  ON CONFLICT (queue, key) DO UPDATE SET job_id = excluded.job_id, until = excluded.until
   WHERE w.until <= now()
  RETURNING w.job_id
),
inserted AS (
  ${insert}
  RETURNING id, queue
)
SELECT inserted.id, false AS duplicate, false AS replaced FROM inserted ${joinNotifying(schema, sql`inserted`, { kind: sql`'enqueued'`, attempt: sql`0` })}
UNION ALL
SELECT w.job_id, true AS duplicate, false AS replaced FROM ${windows} AS w
 WHERE w.queue = ${job.queue}::text AND w.key = ${unique.key}::text AND w.until > now()
   AND NOT EXISTS (SELECT FROM opened)
LIMIT 1`;
}
