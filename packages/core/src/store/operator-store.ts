import type { AttemptRecord } from "./attempt-record";
import type {
  CancelJobsParams,
  CountByQueueParams,
  JobIdParams,
  ListAttemptsParams,
  ListJobsParams,
  ReadQueueGaugesParams,
  RetryDeadJobsParams,
  LineParams,
  ListGroupsParams,
  GroupSummary,
} from "./store-params";
import type { JobLogRecord } from "../job/job-log";
import type { JobRecord } from "../job/job-record";
import type { QueueControls, QueueControlsChange } from "../queue/queue-controls";
import type { QueueCounts, QueueGauges } from "./job-store";

/**
 * The calls of whoever looks after the jobs rather than running them: the
 * dashboard, the CLI, `QueueAdmin` and a metrics scrape read jobs, their
 * attempts, logs, counts and gauges, cancel, retry or run jobs now, and set
 * a queue's controls. A worker reads two of them too: `getJob` and
 * `listQueueControls`.
 *
 * @example
 * ```ts
 * async function deadJobs(store: OperatorStore, queue: string): Promise<number> {
 *   const [counts] = await store.countByQueue({ queues: [queue] });
 *   return counts?.counts.dead ?? 0;
 * }
 * ```
 */
export interface OperatorStore {
  /** One job, or `undefined`. */
  getJob(params: JobIdParams): Promise<JobRecord | undefined>;

  /**
   * Jobs newest first (by id), optionally of one queue and some states;
   * pass the last id seen as `beforeId` for the next page.
   */
  listJobs(params: ListJobsParams): Promise<readonly JobRecord[]>;

  /**
   * The history of a job's attempts, oldest first: one record per attempt
   * that did not succeed (written in the same statement as the outcome, the
   * takeover of a lapsed lease, or the cancel), then the successful attempt,
   * read from the job row. Empty for a job that does not exist.
   */
  listAttempts(params: ListAttemptsParams): Promise<readonly AttemptRecord[]>;

  /** The `ctx.log` lines of each attempt of a job that logged, by attempt number. Empty for a job that does not exist. */
  listJobLogs(params: ListAttemptsParams): Promise<readonly JobLogRecord[]>;

  /**
   * Counts by state and the age of the oldest due job, per queue; with
   * `completedSinceMs`, also the jobs that succeeded within that window.
   */
  countByQueue(params?: CountByQueueParams): Promise<readonly QueueCounts[]>;

  /**
   * The figures of {@link QueueGauges} for each queue, in one cheap read
   * that never counts the succeeded or cancelled history (metrics scrapes
   * call it). With `queues`, exactly those (zeros for a queue without
   * such jobs); without, every queue that has waiting, running or dead jobs.
   */
  readQueueGauges(params?: ReadQueueGaugesParams): Promise<readonly QueueGauges[]>;

  /**
   * Cancels a job that has not finished. False when it was not cancellable.
   * A running attempt gets a `cancelled` history record in the same
   * statement, and its worker is told to stop its handler (a store with
   * wake-ups tells it at once; any store tells it at its next `extendLeases`).
   */
  cancelJob(params: JobIdParams): Promise<boolean>;

  /**
   * Cancels up to `limit` jobs of `queue` in `states` (`queued`, `failed`:
   * jobs no worker holds) in one call, skipping rows another transaction
   * has locked, and tells their waiters. Returns how many it cancelled;
   * call again until it returns less than `limit`.
   */
  cancelJobs(params: CancelJobsParams): Promise<number>;

  /**
   * Runs a finished job (`dead`, `cancelled`, `failed`) again now with a fresh
   * attempt budget. False when the job does not exist or is active.
   */
  retryJob(params: JobIdParams): Promise<boolean>;

  /**
   * Makes a waiting job (`queued`, or `failed` and waiting for its retry)
   * due now: its `run_at` becomes now when it was later, and the queue's
   * listeners are woken. The attempt budget is kept. False when the job
   * does not exist or is not waiting.
   */
  runJobNow(params: JobIdParams): Promise<boolean>;

  /**
   * Runs up to `limit` dead jobs of `queue` again now, each with a fresh
   * attempt budget (as `retryJob`); jobs whose dedupe key is held by an
   * active job are left dead. Returns how many it queued.
   */
  retryDeadJobs(params: RetryDeadJobsParams): Promise<number>;

  /**
   * Lets a serial line that a dead job holds (see `EnqueueOptions.serialKey`)
   * go on: its next job may start; the dead job stays dead. False when the
   * line is not held.
   */
  releaseLine(params: LineParams): Promise<boolean>;

  /**
   * The busiest groups and serial lines of each queue (see
   * `EnqueueOptions.group`): most running first, then most waiting, then
   * held lines, then by key; at most `limit` per queue. The read is
   * bounded: running jobs are counted exactly, waiting jobs up to
   * `GROUP_WAITING_COUNT_CAP` per group, and with `runningOnly` only
   * groups with running jobs are read at all. Sorted by queue, then
   * busiest first.
   */
  listGroups(params: ListGroupsParams): Promise<readonly GroupSummary[]>;

  /**
   * Changes the operator controls of `queue` (pause, running cap, rate
   * limit) for every worker; returns them as they are now. Workers of a
   * queue that may take more now are woken.
   */
  setQueueControls(queue: string, change: QueueControlsChange): Promise<QueueControls>;

  /** The controls of every queue an operator has set something on, by queue name. */
  listQueueControls(): Promise<readonly QueueControls[]>;
}
