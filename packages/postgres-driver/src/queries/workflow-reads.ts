import type { JobState, ListWorkflowsParams, WorkflowRecord, WorkflowStepRecord, WorkflowSummary } from "@stint/core";
import { workflowState } from "@stint/core/internal";
import { sql, type Kysely } from "kysely";
import { allJobsView } from "./finished-jobs";
import { isJobId } from "./job-row";
import { nullableTimestamp, timestampValue } from "./timestamp-value";

interface WorkflowRow {
  readonly id: string;
  readonly name: string;
  readonly step_count: number;
  readonly created_at: Date;
  readonly cancelled_at: Date | null;
  /** `{ state: count }` of its steps. */
  readonly counts: Record<string, number> | null;
  readonly last_finished_at: Date | number | null;
}

interface StepRow {
  readonly id: string;
  readonly step: string;
  readonly queue: string;
  readonly state: JobState;
  readonly attempts: number;
  readonly created_at: Date | number;
  readonly started_at: Date | number | null;
  readonly finished_at: Date | number | null;
  readonly duration_ms: number | null;
  readonly last_error: string | null;
  readonly error_code: string | null;
  /** The ids of the steps it waits for, in id order (`{}` for none). */
  readonly after: string[];
  readonly ignore_failed: boolean;
}

/** The workflow's own row, with its steps counted by state (through the partial indexes on `workflow_id`). */
function workflowRows(schema: string) {
  return sql`SELECT w.id, w.name, w.step_count, w.created_at, w.cancelled_at, c.counts, c.last_finished_at
  FROM ${sql.id(schema, "workflows")} AS w
  CROSS JOIN LATERAL (
    SELECT jsonb_object_agg(s.state, s.n) AS counts, max(s.last_finished_at) AS last_finished_at
      FROM (SELECT j.state, count(*)::integer AS n, max(j.finished_at) AS last_finished_at
              FROM ${allJobsView(schema)} AS j WHERE j.workflow_id = w.id GROUP BY j.state) AS s
  ) AS c`;
}

/**
 * A workflow with all its steps (in id order, each with the ids it waits
 * for), or `undefined`: two statements, the workflow's row and its steps.
 *
 * @example
 * ```ts
 * const workflow = await getWorkflow(db, "stint", { id: "41" });
 * workflow?.steps.map((step) => [step.step, step.state]);
 * ```
 */
export async function getWorkflow(db: Kysely<any>, schema: string, params: { readonly id: string }): Promise<WorkflowRecord | undefined> {
  if (!isJobId(params.id)) return undefined;
  const {
    rows: [row],
  } = await sql<WorkflowRow>`${workflowRows(schema)} WHERE w.id = ${params.id}::bigint`.execute(db);
  if (row === undefined) return undefined;
  const { rows } = await sql<StepRow>`SELECT j.id, j.step, j.queue, j.state, j.attempts, j.created_at, j.started_at, j.finished_at, j.duration_ms,
       j.last_error, j.error_code, coalesce(d.after, '{}') AS after, coalesce(d.ignore_failed, false) AS ignore_failed
  FROM ${allJobsView(schema)} AS j
  LEFT JOIN (
    SELECT d.job_id, array_agg(d.needs_id::text ORDER BY d.needs_id) AS after, bool_or(d.ignore_failed) AS ignore_failed
      FROM ${sql.id(schema, "workflow_deps")} AS d WHERE d.workflow_id = ${params.id}::bigint GROUP BY d.job_id
  ) AS d ON d.job_id = j.id
 WHERE j.workflow_id = ${params.id}::bigint
 ORDER BY j.id`.execute(db);
  return Object.freeze({ ...toSummary(row), cancelledAt: row.cancelled_at, steps: Object.freeze(rows.map(toStepRecord)) });
}

/**
 * Workflows newest first, each with its steps counted by state; with
 * `state`, only those whose derived state it is (the newest `limit` of
 * them, reading further back as needed); with `beforeId`, only older ones.
 *
 * @example
 * ```ts
 * const failed = await listWorkflows(db, "stint", { state: "failed", limit: 20 });
 * ```
 */
export async function listWorkflows(db: Kysely<any>, schema: string, params: ListWorkflowsParams): Promise<readonly WorkflowSummary[]> {
  const filters = [
    ...(params.name === undefined ? [] : [sql`w.name = ${params.name}`]),
    ...(params.beforeId === undefined ? [] : [sql`w.id < ${params.beforeId}::bigint`]),
  ];
  const named = filters.length === 0 ? sql`` : sql`WHERE ${sql.join(filters, sql` AND `)}`;
  const { rows } = await sql<WorkflowRow & { readonly state: string }>`SELECT * FROM (
  SELECT listed.*, ${derivedState()} AS state FROM (${workflowRows(schema)} ${named}) AS listed
) AS found
 WHERE ${params.state === undefined ? sql`true` : sql`found.state = ${params.state}`}
 ORDER BY found.id DESC
 LIMIT ${params.limit}::integer`.execute(db);
  return Object.freeze(rows.map(toSummary));
}

/** `workflowState` in SQL, over a row of {@link workflowRows}: so that a filter on the state runs before the limit. */
function derivedState() {
  const count = (state: string) => sql`coalesce((listed.counts ->> ${sql.lit(state)})::integer, 0)`;
  return sql`CASE WHEN ${count("blocked")} + ${count("queued")} + ${count("running")} + ${count("failed")} > 0 THEN 'running'
            WHEN listed.cancelled_at IS NOT NULL THEN 'cancelled'
            WHEN ${count("dead")} + ${count("cancelled")} > 0 THEN 'failed'
            ELSE 'succeeded' END`;
}

function toSummary(row: WorkflowRow): WorkflowSummary {
  const counts = Object.freeze({ ...(row.counts ?? {}) }) as Readonly<Partial<Record<JobState, number>>>;
  const state = workflowState(counts, row.cancelled_at !== null);
  return Object.freeze({
    id: String(row.id),
    name: row.name,
    state,
    createdAt: row.created_at,
    finishedAt: state === "running" ? null : nullableTimestamp(row.last_finished_at),
    counts,
    stepCount: row.step_count,
  });
}

function toStepRecord(row: StepRow): WorkflowStepRecord {
  return Object.freeze({
    jobId: String(row.id),
    step: row.step,
    queue: row.queue,
    state: row.state,
    after: Object.freeze(row.after),
    ignoreFailedDependencies: row.ignore_failed,
    attempts: row.attempts,
    createdAt: timestampValue(row.created_at),
    startedAt: nullableTimestamp(row.started_at),
    finishedAt: nullableTimestamp(row.finished_at),
    durationMs: row.duration_ms,
    lastError: row.last_error,
    errorCode: row.error_code,
  });
}
