import { type CompleteJobsParams, MAX_INT4 } from "@stint/core/driver";
import { sql, type RawBuilder } from "kysely";
import type { Statements } from "../connection/statement";
import { jobsTable } from "./job-row";
import { CompiledStatements, valueSlot } from "./compiled-statement";
import { heldBy } from "./held-by";
import { announceFinished } from "./announce-finished";
import { notifyJobEvents } from "./notify-job-events";
import { moveToFinished } from "./finished-jobs";
import { countDownSettled, settleSucceededSteps } from "./settle-steps";

/**
 * One attempt to mark succeeded by {@link completeJobsStatement}: a
 * `durationMs` of `null` means "measure it on the database clock", from the
 * attempt's `started_at` to the start of the completing statement.
 */
export interface CompletionRow {
  readonly id: string;
  readonly attempt: number;
  readonly resultJson: string | null;
  readonly durationMs: number | null;
}

/**
 * Marks many attempts `succeeded` in one statement, with their results and
 * durations; returns the ids that applied. An attempt the worker no longer
 * owns (another worker reclaimed the job, or it was rescued or cancelled) is
 * not written. `locked_by` is kept as the last owner; the lease is cleared.
 *
 * A succeeded job leaves `jobs` for `finished_jobs` in the same statement
 * (see `moveToFinished`): `jobs` keeps only the work in flight, so its size
 * does not grow with the history kept. The move costs a completion about
 * what the update it replaces did (a heap row and one index entry, in
 * `finished_jobs` instead of `jobs`, plus the delete's mark).
 *
 * The batch is parsed once into a materialized CTE and the rows are found
 * by primary key (`id = ANY(ARRAY(…))`): whatever the table's statistics,
 * PostgreSQL never re-reads the batch for every job it looks at, a plan
 * that is slow even on a small table (see docs/benchmarks.md, Figures
 * behind the code).
 *
 * The attempts travel as one JSON parameter (built by string joins: the ids
 * are checked digits and the results are JSON text already), and the ids
 * that applied come back as one comma-joined string (split in one call; a
 * text array is parsed character by character in JavaScript): a batch of
 * hundreds costs a few microseconds per job to send and to read.
 *
 * Waiters of the finished jobs are told in the same statement (see
 * `announceFinished`): with nobody waiting, that is one look at the empty
 * `job_waiters` table per statement and no NOTIFY. Job-event listeners
 * likewise (see `notifyJobEvents`): one look at `job_event_listeners`.
 *
 * Workflow steps among them count down the steps waiting for them in the
 * same statement (see `settleSucceededSteps`): a step whose last
 * dependency just succeeded is claimable when this statement commits.
 *
 * @example
 * ```ts
 * const applied = await completeJobs(runner, "stint", {
 *   workerId,
 *   jobs: [{ id: "812", attempt: 1, resultJson: '{"sent":true}', durationMs: 41 }],
 * });
 * ```
 */
export async function completeJobs(statements: Statements, schema: string, params: CompleteJobsParams): Promise<readonly string[]> {
  if (params.jobs.length === 0) return Object.freeze([]);
  const statement = COMPLETIONS.statement(schema, () => completionStatement(schema, valueSlot("workerId"), valueSlot("completions")), {
    workerId: params.workerId,
    completions: completionsJson(params.jobs),
  });
  const { rows } = await statements.run<CompletedIds>(statement);
  return Object.freeze(appliedIds(rows[0]));
}

/** The completion statement, compiled once per schema: a worker sends it for every few hundred outcomes. */
const COMPLETIONS = new CompiledStatements();

/** The answer of {@link completeJobsStatement}: the ids that applied, joined with commas ("" for none). */
export interface CompletedIds {
  readonly ids: string;
}

/** The ids that applied, from a completion's answer row: one split of a string, cheaper to read than an array of hundreds. */
export function appliedIds(row: CompletedIds | undefined): string[] {
  return row === undefined || row.ids === "" ? [] : row.ids.split(",");
}

/**
 * The fenced completion of `jobs`, built for one call: the last statement
 * of the job's transaction in `completeInTransaction`. ({@link completeJobs}
 * sends the same statement, compiled once.)
 */
export function completeJobsStatement(schema: string, workerId: string, jobs: readonly CompletionRow[]): RawBuilder<CompletedIds> {
  return completionStatement(schema, workerId, completionsJson(jobs));
}

/**
 * The fenced completion itself, with the attempts as their JSON text (see
 * {@link completionsJson}), shared by {@link completeJobs} (compiled once,
 * with value slots) and {@link completeJobsStatement}.
 * `statement_timestamp()` rather than `now()`: inside a longer transaction
 * `now()` is when the transaction began, not when the job finished; in a
 * statement of its own the two are the same.
 */
function completionStatement(schema: string, workerId: string, completions: string): RawBuilder<CompletedIds> {
  const finishedNow = sql`statement_timestamp()`;
  return sql<CompletedIds>`WITH batch AS MATERIALIZED (
  SELECT i AS id, a AS attempt, r AS result, d AS duration_ms
    FROM json_to_recordset(${completions}::json) AS done(i bigint, a integer, r jsonb, d integer)
),
done AS (
  DELETE FROM ${jobsTable(schema)} AS jobs
   USING batch
   WHERE jobs.id = ANY(ARRAY(SELECT id FROM batch)) AND jobs.id = batch.id AND jobs.attempts = batch.attempt
     AND ${heldBy(workerId)}
  RETURNING jobs.*, batch.result AS done_result, batch.duration_ms AS done_duration_ms
),
moved AS (
  ${moveToFinished(schema, "done", {
    state: sql`'succeeded'`,
    result: sql`done.done_result`,
    duration_ms: sql`coalesce(done.done_duration_ms,
      least(greatest(round(date_part('epoch', ${finishedNow} - done.started_at) * 1000), 0), ${sql.lit(MAX_INT4)})::integer)`,
    finished_at: finishedNow,
    locked_until: sql`NULL`,
    updated_at: finishedNow,
  })}
)
,
${settleSucceededSteps(schema)}
SELECT coalesce(string_agg(id::text, ','), '') AS ids, ${announceFinished(schema, sql`array_agg(id)`)} AS announced,
       ${notifyJobEvents(schema, sql`done`, { kind: sql`'succeeded'`, attempt: sql.ref("attempts") })} AS notified,
       ${countDownSettled(schema)} AS unblocked
  FROM done`;
}

/**
 * The attempts as a JSON array of `{i, a, r, d}` (id, attempt, result,
 * duration in ms), joined as text: each id is a bigint's digits (the store
 * checks them), each result JSON text, the numbers integers. A null result
 * or duration is left out (`json_to_recordset` reads a missing key as
 * null), and the keys are one letter: most completions of a busy worker
 * have no result, and every byte is sent, then parsed by the database.
 */
function completionsJson(jobs: readonly CompletionRow[]): string {
  const parts = new Array<string>(jobs.length);
  for (let i = 0; i < jobs.length; i += 1) {
    const job = jobs[i]!;
    if (!/^[0-9]{1,19}$/.test(job.id)) throw new TypeError(`job id must be a bigint's digits, got ${JSON.stringify(job.id)}`);
    const result = job.resultJson === null ? "" : `,"r":${job.resultJson}`;
    const duration = job.durationMs === null ? "" : `,"d":${clampDuration(job.durationMs)}`;
    parts[i] = `{"i":${job.id},"a":${Math.trunc(job.attempt)}${result}${duration}}`;
  }
  return `[${parts.join(",")}]`;
}

function clampDuration(durationMs: number): number {
  return Math.min(Math.max(Math.round(durationMs), 0), MAX_INT4);
}
