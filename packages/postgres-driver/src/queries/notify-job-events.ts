import { sql, type RawBuilder } from "kysely";
import { jobEventChannel } from "../events/job-event-channel";

/** The columns, over the changed rows, that name each job event. */
export interface JobEventColumns {
  /** The event's kind per row (`'started'`, or a `CASE` whose `NULL` sends nothing for that row). */
  readonly kind: RawBuilder<unknown>;
  readonly id?: RawBuilder<unknown>;
  readonly queue?: RawBuilder<unknown>;
  /** The attempt per row; `0` for an enqueue. */
  readonly attempt: RawBuilder<unknown>;
  /** A small `jsonb` per row (an error code, a progress value), or left out. */
  readonly detail?: RawBuilder<unknown>;
}

/**
 * `"<schema>".notify_job_events(…)` (migration 17) over the rows of
 * `from` (the changed rows, a CTE or a join of CTEs): the part of every
 * statement that changes a job's state which tells job-event listeners.
 * A scalar expression: the uncorrelated `EXISTS` runs once per statement,
 * and only when it finds a live listener does the subquery aggregate the
 * rows and call the function, so with nobody listening a statement pays
 * one look at the empty `job_event_listeners` and nothing else.
 * Returns how many notifications it sent (`0` with nobody listening).
 *
 * @example
 * ```ts
 * sql`SELECT claimed.* FROM claimed CROSS JOIN (SELECT ${notifyJobEvents(schema, sql`claimed`, { kind: sql`'started'`, attempt: sql.ref("attempts") })}) AS notified`;
 * ```
 */
export function notifyJobEvents(schema: string, from: RawBuilder<unknown>, columns: JobEventColumns): RawBuilder<number> {
  const detail = columns.detail === undefined ? sql`NULL::jsonb[]` : sql`array_agg((${columns.detail})::jsonb)`;
  return sql<number>`CASE WHEN EXISTS (SELECT FROM ${sql.id(schema, "job_event_listeners")} AS l WHERE l.expires_at > now())
  THEN (SELECT ${sql.id(schema, "notify_job_events")}(${sql.lit(jobEventChannel(schema))}::text, array_agg((${columns.kind})::text),
    array_agg((${columns.id ?? sql.ref("id")})::bigint), array_agg((${columns.queue ?? sql.ref("queue")})::text),
    array_agg((${columns.attempt})::integer), ${detail}) FROM ${from})
  ELSE 0 END`;
}

/**
 * `CROSS JOIN (SELECT <notifyJobEvents> AS notified) AS notified`: the tail
 * of a `SELECT … FROM <changed rows>` that tells job-event listeners of
 * those rows, as one extra column-less row joined once (see
 * {@link notifyJobEvents}).
 *
 * @example
 * ```ts
 * sql`WITH written AS (UPDATE … RETURNING …) SELECT written.id FROM written ${joinNotifying(schema, sql`written`, { kind: sql`'progress'`, attempt: sql.ref("attempts") })}`;
 * ```
 */
export function joinNotifying(schema: string, from: RawBuilder<unknown>, columns: JobEventColumns): RawBuilder<unknown> {
  return sql`CROSS JOIN (SELECT ${notifyJobEvents(schema, from, columns)} AS notified) AS notified`;
}
