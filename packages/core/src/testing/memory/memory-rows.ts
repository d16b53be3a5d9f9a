import { EMPTY_META } from "../../job/job-meta";
import type { ClaimedJob, JobRecord } from "../../job/job-record";
import type { JobState } from "../../job/job-state";
import type { JsonObject, JsonValue } from "../../job/json-types";
import type { AttemptOutcomeName } from "../../store/attempt-record";
import type { NewJob, SerialOnDead } from "../../store/job-store";
import type { QueueRetention } from "../../queue/queue-controls";

/**
 * One job as the in-memory store keeps it: the columns of the PostgreSQL
 * `jobs` table, times as milliseconds since the epoch, JSON values as text
 * (parsed on every read, so no caller shares an object with the store).
 */
export interface MemoryJobRow {
  /** The id as its decimal text. */
  readonly id: string;
  /** The id as a number, for ordering. */
  readonly seq: number;
  readonly queue: string;
  payloadJson: string;
  state: JobState;
  priority: number;
  attempts: number;
  maxAttempts: number;
  runAt: number;
  timeoutMs: number | null;
  lockedBy: string | null;
  lockedUntil: number | null;
  /** Not `readonly`: a holder that has started gives its key up to a follow-up (see `enqueueOne`). */
  dedupeKey: string | null;
  /** No attempt starts after this instant; `null` for never. */
  startBy: number | null;
  /** A follow-up run's predecessor (see `enqueueOne`): not claimed while that job is active. */
  follows: string | null;
  /** The job's group or serial key; `""` for none. */
  readonly groupKey: string;
  /** Set for a serial key: what its line does when the job dies. */
  readonly serial: SerialOnDead | null;
  lastError: string | null;
  errorCode: string | null;
  resultJson: string | null;
  readonly createdAt: number;
  startedAt: number | null;
  finishedAt: number | null;
  durationMs: number | null;
  updatedAt: number;
  metaJson: string | null;
  progressJson: string | null;
  /** The workflow the job is a step of, or `null`. */
  readonly workflowId: string | null;
  /** The step's name in its workflow, or `null`. */
  readonly step: string | null;
  /** Whether the step runs even when a step it waits for ends dead or cancelled. */
  readonly ignoreFailedDependencies: boolean;
  /** How many of the edges into the step are not settled: a step not yet started with some is `blocked`. */
  waitingOn: number;
}

/** One attempt that did not succeed, as `job_attempts` keeps it. */
export interface MemoryAttemptRow {
  readonly jobId: string;
  readonly attempt: number;
  readonly outcome: AttemptOutcomeName;
  readonly workerId: string | null;
  readonly startedAt: number | null;
  readonly finishedAt: number | null;
  readonly durationMs: number | null;
  readonly errorMessage: string | null;
  readonly errorCode: string | null;
  readonly errorStack: string | null;
}

/** One attempt's `ctx.log` lines, as `job_logs` keeps them: each line's JSON text, oldest first. */
export interface MemoryLogRow {
  lines: readonly string[];
  droppedLines: number;
}

/** One death whose `onDead` hook has not run, as `dead_hooks` keeps it. */
export interface MemoryDeadHookRow {
  readonly jobId: string;
  readonly attempt: number;
  readonly queue: string;
  readonly diedAt: number;
  readonly errorCode: string | null;
  readonly lastError: string | null;
  lockedBy: string | null;
  /** `-Infinity` until the first claim. */
  lockedUntil: number;
  deliveries: number;
}

/** One key of the effects ledger. */
export interface MemoryEffectRow {
  readonly jobId: string;
  readonly resultJson: string | null;
  readonly createdAt: number;
}

/** The operator controls of one queue, with its rate limit's token bucket. */
export interface MemoryQueueRow {
  readonly queue: string;
  paused: boolean;
  maxRunning: number | null;
  maxRunningPerGroup: number | null;
  rateLimit: { readonly limit: number; readonly periodMs: number } | null;
  rateTokens: number | null;
  rateRefilledAt: number | null;
  retention: QueueRetention;
  updatedAt: number;
}

/** A `queued` job with id `seq`, inserted at `now`, due at `runAt` (or `now`) plus `delayMs`. */
export function newJobRow(seq: number, job: NewJob, now: number): MemoryJobRow {
  return {
    id: String(seq),
    seq,
    queue: job.queue,
    payloadJson: job.payloadJson,
    state: "queued",
    priority: job.priority,
    attempts: 0,
    maxAttempts: job.maxAttempts,
    runAt: (job.runAt?.getTime() ?? now) + job.delayMs,
    timeoutMs: job.timeoutMs,
    lockedBy: null,
    lockedUntil: null,
    dedupeKey: job.dedupeKey,
    startBy: startByOf(job, (job.runAt?.getTime() ?? now) + job.delayMs),
    follows: null,
    groupKey: job.groupKey ?? "",
    serial: job.serial ?? null,
    lastError: null,
    errorCode: null,
    resultJson: null,
    createdAt: now,
    startedAt: null,
    finishedAt: null,
    durationMs: null,
    updatedAt: now,
    metaJson: job.metaJson ?? null,
    progressJson: null,
    workflowId: null,
    step: null,
    ignoreFailedDependencies: false,
    waitingOn: 0,
  };
}

/** The deadline a job's `startBy` or `expireInMs` (counted from its run time) gives it, or `null`. */
export function startByOf(job: NewJob, runAt: number): number | null {
  if (job.startBy !== undefined && job.startBy !== null) return job.startBy.getTime();
  return job.expireInMs === undefined || job.expireInMs === null ? null : runAt + job.expireInMs;
}

/** Whether a job in `state` holds its dedupe key (`queued`, `running`, `failed`). */
export function isActive(state: JobState): boolean {
  return state === "queued" || state === "running" || state === "failed";
}

/** Whether a job in `state` has not finished: `blocked`, or active (what `cancelJob` and `cancelWorkflow` cancel). */
export function isUnfinished(state: JobState): boolean {
  return state === "blocked" || isActive(state);
}

/** Whether `state` is one a lookup of due jobs takes (`queued` or `failed`). */
export function isWaiting(state: JobState): boolean {
  return state === "queued" || state === "failed";
}

const MAX_BIGINT = 9_223_372_036_854_775_807n;

/**
 * The store's key for a job id as a caller gave it (`"0812"` is job 812, as
 * a `bigint` cast reads it), or `undefined` for text that cannot be a job id.
 */
export function jobKey(id: unknown): string | undefined {
  if (typeof id !== "string" || !/^[0-9]{1,19}$/.test(id)) return undefined;
  const value = BigInt(id);
  return value > 0n && value <= MAX_BIGINT ? value.toString() : undefined;
}

/** Highest priority first, then oldest `run_at`, then lowest id: the claim order. */
export function inClaimOrder(a: MemoryJobRow, b: MemoryJobRow): number {
  return b.priority - a.priority || a.runAt - b.runAt || a.seq - b.seq;
}

/** A JSON text as the value it holds, or `null` for none. */
export function parsedJson(text: string | null): unknown {
  return text === null ? null : JSON.parse(text);
}

function metaOf(row: MemoryJobRow): JsonObject {
  return row.metaJson === null ? EMPTY_META : Object.freeze(JSON.parse(row.metaJson) as JsonObject);
}

function dateOf(ms: number | null): Date | null {
  return ms === null ? null : new Date(ms);
}

/** The fields a claimed job and a job record share. */
function commonFields(row: MemoryJobRow) {
  return {
    id: row.id,
    queue: row.queue,
    payload: JSON.parse(row.payloadJson) as unknown,
    maxAttempts: row.maxAttempts,
    priority: row.priority,
    timeoutMs: row.timeoutMs,
    createdAt: new Date(row.createdAt),
    runAt: new Date(row.runAt),
    meta: metaOf(row),
  };
}

/** The row as `getJob` returns it. */
export function toJobRecord(row: MemoryJobRow): JobRecord {
  return Object.freeze({
    ...commonFields(row),
    state: row.state,
    attempts: row.attempts,
    lockedBy: row.lockedBy,
    lockedUntil: dateOf(row.lockedUntil),
    dedupeKey: row.dedupeKey,
    startBy: dateOf(row.startBy),
    group: row.serial === null && row.groupKey !== "" ? row.groupKey : null,
    serialKey: row.serial === null ? null : row.groupKey,
    workflowId: row.workflowId,
    step: row.step,
    lastError: row.lastError,
    errorCode: row.errorCode,
    result: parsedJson(row.resultJson),
    startedAt: dateOf(row.startedAt),
    finishedAt: dateOf(row.finishedAt),
    durationMs: row.durationMs,
    updatedAt: new Date(row.updatedAt),
    progress: parsedJson(row.progressJson) as JsonValue | null,
  });
}

/** The row as a claim hands it to a worker (`attempt` is the new `attempts`). */
export function toClaimedJob(row: MemoryJobRow): ClaimedJob {
  return Object.freeze({ ...commonFields(row), attempt: row.attempts, ...(row.workflowId === null ? {} : { workflowId: row.workflowId }) });
}
