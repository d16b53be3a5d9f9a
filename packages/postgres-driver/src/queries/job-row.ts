import { type ClaimedJob, type JobRecord, type JobState, type JsonObject, type JsonValue } from "@stint/core";
import { type ClaimedBatch, type ClaimHold } from "@stint/core/driver";
import { EMPTY_META } from "@stint/core/internal";
import { sql, type RawBuilder } from "kysely";
import { nullableTimestamp, timestampFromEpochMs, timestampValue } from "./timestamp-value";

/** `"<schema>"."jobs"`, quoted. */
export function jobsTable(schema: string): RawBuilder<unknown> {
  return sql.id(schema, "jobs");
}

/** `"<schema>"."queues"`: the operator controls of queues. */
export function queuesTable(schema: string): RawBuilder<unknown> {
  return sql.id(schema, "queues");
}

/** Every column a job row has, in `jobs` and in `finished_jobs` alike (a test checks both tables against it). */
export const JOB_COLUMN_NAMES = Object.freeze([
  "id",
  "queue",
  "priority",
  "max_attempts",
  "timeout_ms",
  "run_at",
  "created_at",
  "dedupe_key",
  "payload",
  "meta",
  "attempts",
  "locked_by",
  "started_at",
  "state",
  "updated_at",
  "locked_until",
  "finished_at",
  "duration_ms",
  "result",
  "last_error",
  "error_code",
  "progress",
  "start_by",
  "follows",
  "group_key",
  "serial",
  "workflow_id",
  "step",
  "waiting_on",
] as const);

/** A column of a job row. */
export type JobColumn = (typeof JOB_COLUMN_NAMES)[number];

/** Every column of a job row: the select list of {@link JobRow}. */
export const JOB_COLUMNS: RawBuilder<unknown> = sql.join(JOB_COLUMN_NAMES.map((column) => sql.id(column)));

/**
 * A row of `jobs` as pg returns it: bigint as text, jsonb parsed,
 * timestamptz as `Date` (or a number for `±infinity`; mapped by
 * `timestampValue`).
 */
export interface JobRow {
  readonly id: string;
  readonly queue: string;
  readonly payload: unknown;
  readonly state: JobState;
  readonly priority: number;
  readonly attempts: number;
  readonly max_attempts: number;
  readonly run_at: Date | number;
  readonly timeout_ms: number | null;
  readonly locked_by: string | null;
  readonly locked_until: Date | number | null;
  readonly dedupe_key: string | null;
  readonly start_by: Date | number | null;
  readonly group_key: string;
  readonly serial: string | null;
  readonly workflow_id: string | null;
  readonly step: string | null;
  readonly last_error: string | null;
  readonly error_code: string | null;
  readonly result: unknown;
  readonly created_at: Date | number;
  readonly started_at: Date | number | null;
  readonly finished_at: Date | number | null;
  readonly duration_ms: number | null;
  readonly updated_at: Date | number;
  /** `null` when the job has no meta. */
  readonly meta: JsonObject | null;
  readonly progress: JsonValue | null;
}

/** The columns a claim returns; its two times as milliseconds since the epoch. */
export type ClaimedRow = Pick<JobRow, "id" | "queue" | "payload" | "meta" | "attempts" | "max_attempts" | "priority" | "timeout_ms" | "workflow_id"> & {
  readonly created_at_ms: number;
  readonly run_at_ms: number;
};

/** Maps a claimed row to the `ClaimedJob` a worker holds (`attempt` is the new `attempts`). */
export function toClaimedJob(row: ClaimedRow): ClaimedJob {
  const job = {
    id: String(row.id),
    queue: row.queue,
    payload: row.payload,
    attempt: row.attempts,
    maxAttempts: row.max_attempts,
    priority: row.priority,
    timeoutMs: row.timeout_ms,
    createdAt: timestampFromEpochMs(row.created_at_ms),
    runAt: timestampFromEpochMs(row.run_at_ms),
    meta: row.meta === null ? EMPTY_META : Object.freeze(row.meta),
  };
  return Object.freeze(row.workflow_id === null ? job : { ...job, workflowId: String(row.workflow_id) });
}

/** The claimed rows as a worker holds them, in the claim index's order. */
export function claimedBatch(rows: ClaimedRow[], hold?: ClaimHold): ClaimedBatch {
  const jobs = rows.sort(inClaimOrder).map(toClaimedJob);
  return Object.freeze(hold === undefined ? jobs : Object.assign(jobs, { hold: Object.freeze(hold) }));
}

/** Highest priority first, then oldest `run_at`, then lowest id: the claim index's order. */
function inClaimOrder(a: ClaimedRow, b: ClaimedRow): number {
  if (a.priority !== b.priority) return b.priority - a.priority;
  if (a.run_at_ms !== b.run_at_ms) return a.run_at_ms - b.run_at_ms;
  const idA = String(a.id);
  const idB = String(b.id);
  return idA.length - idB.length || (idA < idB ? -1 : idA > idB ? 1 : 0);
}

/** Maps a full row to a `JobRecord`. */
export function toJobRecord(row: JobRow): JobRecord {
  return Object.freeze({
    id: String(row.id),
    queue: row.queue,
    payload: row.payload,
    state: row.state,
    priority: row.priority,
    attempts: row.attempts,
    maxAttempts: row.max_attempts,
    runAt: timestampValue(row.run_at),
    timeoutMs: row.timeout_ms,
    lockedBy: row.locked_by,
    lockedUntil: nullableTimestamp(row.locked_until),
    dedupeKey: row.dedupe_key,
    startBy: nullableTimestamp(row.start_by),
    group: row.serial === null && row.group_key !== "" ? row.group_key : null,
    serialKey: row.serial === null ? null : row.group_key,
    workflowId: row.workflow_id === null ? null : String(row.workflow_id),
    step: row.step,
    lastError: row.last_error,
    errorCode: row.error_code,
    result: row.result,
    createdAt: timestampValue(row.created_at),
    startedAt: nullableTimestamp(row.started_at),
    finishedAt: nullableTimestamp(row.finished_at),
    durationMs: row.duration_ms,
    updatedAt: timestampValue(row.updated_at),
    meta: row.meta === null ? EMPTY_META : Object.freeze(row.meta),
    progress: row.progress,
  });
}

const MAX_BIGINT = 9_223_372_036_854_775_807n;

/**
 * True when `id` can be a job id (a positive bigint in decimal). Lookups of
 * anything else find nothing instead of failing on a cast.
 */
export function isJobId(id: unknown): id is string {
  return typeof id === "string" && /^[0-9]{1,19}$/.test(id) && BigInt(id) > 0n && BigInt(id) <= MAX_BIGINT;
}

/** Milliseconds as an `interval`, computed by the database: `($1::double precision * interval '1 millisecond')`. */
export function millisecondsInterval(ms: number): RawBuilder<unknown> {
  return sql`(${ms}::double precision * interval '1 millisecond')`;
}
