import type { NewWorkflowStep } from "@stint/core/driver";
import { sql, type RawBuilder } from "kysely";
import { jobsTable } from "./job-row";

/**
 * `steps AS MATERIALIZED (…)`: the steps to insert, one row each with a
 * new job id (drawn in input order) and its 1-based position `ord`, read
 * from one array per column. `when` gates the whole list (a fence: no row,
 * and no id drawn, unless it holds).
 */
export function stepRowsCte(schema: string, steps: readonly NewWorkflowStep[], when: RawBuilder<unknown> = sql`true`): RawBuilder<unknown> {
  const jobs = steps.map((entry) => entry.job);
  return sql`steps AS MATERIALIZED (
  SELECT nextval(${sql.lit(`"${schema}".jobs_id_seq`)}::regclass) AS id, i.*
    FROM ROWS FROM (unnest(${jobs.map((job) => job.queue)}::text[]), jsonb_array_elements(${`[${jobs.map((job) => job.payloadJson).join(",")}]`}::jsonb),
                    unnest(${jobs.map((job) => job.priority)}::smallint[]), unnest(${jobs.map((job) => job.maxAttempts)}::integer[]),
                    unnest(${jobs.map((job) => job.timeoutMs)}::integer[]), unnest(${jobs.map((job) => job.runAt)}::timestamptz[]),
                    unnest(${jobs.map((job) => job.delayMs)}::double precision[]), unnest(${jobs.map((job) => job.metaJson ?? null)}::text[]),
                    unnest(${jobs.map((job) => job.startBy ?? null)}::timestamptz[]), unnest(${jobs.map((job) => job.expireInMs ?? null)}::double precision[]),
                    unnest(${jobs.map((job) => job.groupKey ?? "")}::text[]), unnest(${jobs.map((job) => job.serial ?? null)}::text[]),
                    unnest(${steps.map((entry) => entry.step)}::text[]), unnest(${steps.map((entry) => new Set(entry.after).size)}::integer[]),
                    unnest(${steps.map((entry) => entry.ignoreFailedDependencies)}::boolean[]))
         WITH ORDINALITY AS i(queue, payload, priority, max_attempts, timeout_ms, run_at, delay_ms, meta, start_by, expire_in_ms,
                              group_key, serial, step, waits, ignore_failed, ord)
   WHERE ${when}
   ORDER BY i.ord
)`;
}

/** `INSERT INTO jobs … FROM steps`: each step a job of `workflow` (an expression), `blocked` while it waits for any step. */
export function insertStepJobs(schema: string, workflow: RawBuilder<unknown>): RawBuilder<unknown> {
  return sql`INSERT INTO ${jobsTable(schema)} (id, queue, payload, priority, max_attempts, timeout_ms, run_at, meta, start_by, group_key, serial,
                                     workflow_id, step, waiting_on, state)
  SELECT steps.id, steps.queue, steps.payload, steps.priority, steps.max_attempts, steps.timeout_ms,
         COALESCE(steps.run_at, now()) + steps.delay_ms * interval '1 millisecond', steps.meta::jsonb,
         COALESCE(steps.start_by, COALESCE(steps.run_at, now()) + (steps.delay_ms + steps.expire_in_ms) * interval '1 millisecond'),
         steps.group_key, steps.serial, ${workflow}, steps.step, steps.waits, CASE WHEN steps.waits > 0 THEN 'blocked' ELSE 'queued' END
    FROM steps
   ORDER BY steps.ord`;
}

/** `INSERT INTO workflow_deps … `: the dependencies among `steps`, by position, of `workflow` (an expression). */
export function insertStepDependencies(schema: string, steps: readonly NewWorkflowStep[], workflow: RawBuilder<unknown>): RawBuilder<unknown> {
  const from: number[] = [];
  const to: number[] = [];
  steps.forEach((entry, index) => {
    for (const other of new Set(entry.after)) {
      from.push(index + 1);
      to.push(other + 1);
    }
  });
  return sql`INSERT INTO ${sql.id(schema, "workflow_deps")} (job_id, needs_id, workflow_id, ignore_failed)
  SELECT waiter.id, needed.id, ${workflow}, waiter.ignore_failed
    FROM unnest(${from}::integer[], ${to}::integer[]) AS e(waiter_ord, needed_ord)
    JOIN steps AS waiter ON waiter.ord = e.waiter_ord
    JOIN steps AS needed ON needed.ord = e.needed_ord`;
}

/** The new job ids, comma-joined in input order. */
export const STEP_IDS: RawBuilder<string> = sql<string>`(SELECT coalesce(string_agg(steps.id::text, ',' ORDER BY steps.ord), '') FROM steps)`;
