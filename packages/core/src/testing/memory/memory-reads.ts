import type { JobRecord } from "../../job/job-record";
import type { JobState } from "../../job/job-state";
import type { QueueCounts, QueueGauges } from "../../store/job-store";
import type { ListJobsParams } from "../../store/store-params";
import { isWaiting, jobKey, toJobRecord, type MemoryJobRow } from "./memory-rows";
import type { MemoryState } from "./memory-state";

/** One job, or `undefined` (also for text that cannot be a job id). */
export function getJob(state: MemoryState, id: string): JobRecord | undefined {
  const key = jobKey(id);
  const row = key === undefined ? undefined : state.jobs.get(key);
  return row === undefined ? undefined : toJobRecord(row);
}

/** Jobs newest first (by id), optionally of one queue and some states, before `beforeId`. */
export function listJobs(state: MemoryState, params: ListJobsParams): readonly JobRecord[] {
  const before = params.beforeId === undefined ? Infinity : Number(jobKey(params.beforeId) ?? 0);
  const rows = params.queue === undefined ? state.jobs.values() : state.rowsOf(params.queue);
  const page: JobRecord[] = [];
  for (const row of [...rows].reverse()) {
    if (page.length >= params.limit) break;
    if (row.seq < before && (params.states === undefined || params.states.includes(row.state)) && inGroupAsked(row, params)) page.push(toJobRecord(row));
  }
  return Object.freeze(page);
}

/** Whether `row` is of the group or serial line `params` asks for (any job when it asks for neither). */
function inGroupAsked(row: MemoryJobRow, params: ListJobsParams): boolean {
  if (params.group !== undefined) return row.serial === null && row.groupKey === params.group;
  if (params.serialKey !== undefined) return row.serial !== null && row.groupKey === params.serialKey;
  return true;
}

/** Whether `row` is due: waiting and its `run_at` has come. */
function isDue(row: MemoryJobRow, now: number): boolean {
  return isWaiting(row.state) && row.runAt <= now;
}

/** The names to report: exactly those asked for (sorted, once each), else every queue that has jobs matching `has`. */
function reportedQueues(state: MemoryState, asked: readonly string[] | undefined, has: (row: MemoryJobRow) => boolean): string[] {
  if (asked !== undefined) return [...new Set(asked)].sort();
  return state
    .queuesWithJobs()
    .filter((queue) => [...state.rowsOf(queue)].some(has))
    .sort();
}

/** The age of the oldest due job of `rows` in whole milliseconds, or `null` when none is due. */
function oldestDueAge(rows: readonly MemoryJobRow[], now: number): number | null {
  let oldest = Infinity;
  for (const row of rows) if (isDue(row, now) && row.runAt < oldest) oldest = row.runAt;
  return oldest === Infinity ? null : Math.floor(now - oldest);
}

/** Counts by state, due jobs and the queue lag per queue; with `completedSinceMs`, the successes within that window. */
export function countByQueue(
  state: MemoryState,
  params: { readonly queues?: readonly string[]; readonly completedSinceMs?: number } = {},
): readonly QueueCounts[] {
  const now = state.now();
  return Object.freeze(
    reportedQueues(state, params.queues, () => true).map((queue): QueueCounts => {
      const rows = [...state.rowsOf(queue)];
      const counts: Record<JobState, number> = { blocked: 0, queued: 0, running: 0, failed: 0, succeeded: 0, dead: 0, cancelled: 0 };
      for (const row of rows) counts[row.state] += 1;
      const since = params.completedSinceMs;
      return Object.freeze({
        queue,
        counts: Object.freeze(counts),
        due: rows.filter((row) => isDue(row, now)).length,
        oldestDueAgeMs: oldestDueAge(rows, now),
        ...(since === undefined ? {} : { completedSince: rows.filter((row) => row.state === "succeeded" && row.finishedAt! > now - since).length }),
      });
    }),
  );
}

/** Blocked, waiting, running and dead jobs, due jobs and the lag per queue: exactly the queues asked for, else every queue with such jobs. */
export function readQueueGauges(state: MemoryState, params: { readonly queues?: readonly string[] } = {}): readonly QueueGauges[] {
  const now = state.now();
  const gauged = (row: MemoryJobRow): boolean => row.state !== "succeeded" && row.state !== "cancelled";
  return Object.freeze(
    reportedQueues(state, params.queues, gauged).map((queue): QueueGauges => {
      const rows = [...state.rowsOf(queue)];
      const inState = (wanted: JobState): number => rows.filter((row) => row.state === wanted).length;
      return Object.freeze({
        queue,
        blocked: inState("blocked"),
        queued: inState("queued"),
        failed: inState("failed"),
        running: inState("running"),
        dead: inState("dead"),
        due: rows.filter((row) => isDue(row, now)).length,
        oldestDueAgeMs: oldestDueAge(rows, now),
      });
    }),
  );
}
