import { MAX_ERROR_MESSAGE } from "@stint/core/driver";
import { DEAD_LETTER_COPY_KEY, DEAD_LETTER_ORIGIN_KEY, DEAD_LETTER_QUEUE_KEY } from "@stint/core/internal";
import { sql, type RawBuilder } from "kysely";
import { jobsTable } from "./job-row";

const QUEUE_KEY = sql.lit(DEAD_LETTER_QUEUE_KEY);
const ORIGIN_KEY = sql.lit(DEAD_LETTER_ORIGIN_KEY);
const COPY_KEY = sql.lit(DEAD_LETTER_COPY_KEY);

/**
 * The dead-letter queue of the job row `row` (a table alias or CTE name):
 * the queue its `meta` names under `stint.deadLetterQueue`, unless the job
 * is itself a copy (its meta has `stint.deadLetter`: a copy is never copied
 * again, so two queues naming each other cannot loop), or a name no queue
 * may have; else `NULL`. A job without meta is `NULL` at the first test.
 */
export function deadLetterTarget(row: string): RawBuilder<string | null> {
  const meta = sql`${sql.ref(row)}.meta`;
  return sql<string | null>`CASE WHEN jsonb_typeof(${meta} -> ${QUEUE_KEY}) = 'string' AND NOT (${meta} ? ${ORIGIN_KEY})
   AND char_length(${meta} ->> ${QUEUE_KEY}) BETWEEN 1 AND 128 THEN ${meta} ->> ${QUEUE_KEY} END`;
}

/**
 * For the `RETURNING` list of the statement that deletes dying jobs from
 * `jobs` (alias `jobs`): the id the job's dead-letter copy will have,
 * drawn from the jobs' sequence, or `NULL` when it has no dead-letter queue.
 */
export function deadLetterIdColumn(schema: string): RawBuilder<unknown> {
  return sql`CASE WHEN ${deadLetterTarget("jobs")} IS NOT NULL THEN nextval(${sql.lit(`"${schema}".jobs_id_seq`)}::regclass) END AS dead_letter_id`;
}

/** The `meta` a dying job of `source` keeps: with the id of its copy, when it has one. */
export function metaLinkingCopy(source: string): RawBuilder<unknown> {
  const from = sql.ref(source);
  return sql`CASE WHEN ${from}.dead_letter_id IS NULL THEN ${from}.meta
  ELSE ${from}.meta || jsonb_build_object(${COPY_KEY}, ${from}.dead_letter_id::text) END`;
}

/**
 * Enqueues the dead-letter copy of each job of `source` (a CTE of the rows
 * a statement just deleted from `jobs` as they die, with `dead_letter_id`
 * from {@link deadLetterIdColumn}) that has one: a `queued` job on its
 * dead-letter queue, due now, with its payload, priority, attempt budget
 * and time limit, whose meta is the dead job's without the routing keys
 * and with `stint.deadLetter`: the dead job's id, queue, attempts, error
 * code and the first line of its error. In the statement that records the
 * death, so both commit or neither does; with no dead-letter queue in the
 * batch it inserts nothing and costs a filter over the batch.
 *
 * ### SQL
 * ```sql
 * INSERT INTO "stint"."jobs" (id, queue, payload, meta, priority, max_attempts, timeout_ms)
 * SELECT died.dead_letter_id, <target>, died.payload,
 *        (died.meta - 'stint.deadLetterQueue' - 'stint.deadLetterJobId')
 *          || jsonb_build_object('stint.deadLetter', jsonb_build_object('jobId', died.id::text, 'queue', died.queue, …)),
 *        died.priority, died.max_attempts, died.timeout_ms
 *   FROM died WHERE died.dead_letter_id IS NOT NULL
 * ```
 *
 * @example
 * ```ts
 * sql`WITH died AS (DELETE FROM ${jobsTable(schema)} AS jobs … RETURNING jobs.*, ${deadLetterIdColumn(schema)}),
 * copies AS (${deadLetterInsert(schema, "died", { errorCode: sql.ref("died.error_code"), lastError: sql.ref("died.last_error") })})
 * SELECT id FROM died`;
 * ```
 */
export function deadLetterInsert(
  schema: string,
  source: string,
  death: { readonly errorCode: RawBuilder<unknown>; readonly lastError: RawBuilder<unknown> },
): RawBuilder<unknown> {
  const died = sql.ref(source);
  const origin = sql`jsonb_build_object('jobId', ${died}.id::text, 'queue', ${died}.queue, 'attempts', ${died}.attempts,
           'errorCode', ${death.errorCode}, 'error', left(split_part(${death.lastError}, E'\\n', 1), ${sql.lit(MAX_ERROR_MESSAGE)}))`;
  return sql`INSERT INTO ${jobsTable(schema)} (id, queue, payload, meta, priority, max_attempts, timeout_ms)
  SELECT ${died}.dead_letter_id, ${deadLetterTarget(source)}, ${died}.payload,
         (${died}.meta - ${QUEUE_KEY} - ${COPY_KEY}) || jsonb_build_object(${ORIGIN_KEY}, ${origin}),
         ${died}.priority, ${died}.max_attempts, ${died}.timeout_ms
    FROM ${died}
   WHERE ${died}.dead_letter_id IS NOT NULL`;
}
