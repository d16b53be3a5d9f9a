import type { JobState } from "../job/job-state";
import type { CompletedJob, DeadJob, JobAttempt, RetryingJob } from "./job-store";

// What each JobStore call takes and answers, declared once: the interface,
// the checked wrapper, the stores and their callers all name these.

/** What {@link JobStore.claimBatch} takes. */
export interface ClaimBatchParams {
  readonly queue: string;
  /** The claiming worker, recorded as the owner of every job it takes. */
  readonly workerId: string;
  /** At most this many jobs (1 to `MAX_BATCH_SIZE`). */
  readonly limit: number;
  /** How long the claim is owned, from the database's `now()` (1 to `MAX_LEASE_MS`). */
  readonly leaseMs: number;
  /**
   * Only jobs whose `timeout_ms` is at most this (or that have none): a
   * run with a deadline does not take a job it could not finish in time.
   */
  readonly maxTimeoutMs?: number;
  /**
   * Also take over running jobs whose lease expired (default true). A
   * worker asks for them every so often rather than on every claim, since
   * looking costs the store a scan of the leases.
   */
  readonly takeOverExpired?: boolean;
  /**
   * Wait until the claim is durable before returning it (default false),
   * as every other write does: on disk, and on any standby the store must
   * wait for. A store that can commit a claim without waiting for that (for
   * PostgreSQL, without waiting for its WAL flush) may do so otherwise: a
   * database crash right after the claim can then undo it, and the job
   * becomes claimable again while the worker that got it still holds it.
   * The worker handles that (see `WorkerOptions.durableClaims`).
   */
  readonly durable?: boolean;
}

/** What {@link JobStore.extendLeases} takes. */
export interface ExtendLeasesParams {
  readonly workerId: string;
  /** The new lease, from the database's `now()`. */
  readonly leaseMs: number;
  readonly jobs: readonly JobAttempt[];
}

/** What {@link JobStore.extendLeases} answers. */
export interface ExtendedLeases {
  /** The ids whose lease was extended: the worker still owns them. */
  readonly extended: readonly string[];
  /**
   * The ids an operator cancelled while the worker held them (the job is
   * `cancelled` in the attempt asked about, and the worker was its last
   * owner): their handlers should stop.
   */
  readonly cancelled: readonly string[];
}

/** Attempts one worker finalizes in one call, each write fenced on `workerId` and the job's id and attempt. */
export interface WorkerBatch<J extends JobAttempt> {
  readonly workerId: string;
  readonly jobs: readonly J[];
}

/** What {@link JobStore.completeJobs} takes. */
export type CompleteJobsParams = WorkerBatch<CompletedJob>;

/** What {@link JobStore.scheduleRetries} takes. */
export type ScheduleRetriesParams = WorkerBatch<RetryingJob>;

/** What {@link JobStore.markJobsDead} takes. */
export type MarkJobsDeadParams = WorkerBatch<DeadJob>;

/** What {@link JobStore.rescueExpiredLeases} takes. */
export interface RescueExpiredLeasesParams {
  /** Only these queues; all queues when left out. */
  readonly queues?: readonly string[];
  /** At most this many jobs per call (1 to `MAX_RESCUE_BATCH`). */
  readonly limit: number;
}

/** What {@link JobStore.cancelExpiredJobs} takes. */
export interface CancelExpiredJobsParams {
  /** Only these queues; all queues when left out. */
  readonly queues?: readonly string[];
  /** At most this many jobs per call (1 to `MAX_EXPIRE_BATCH`). */
  readonly limit: number;
}

/** What {@link JobStore.deleteClosedWindows} takes. */
export interface DeleteClosedWindowsParams {
  /** Only the windows of these queues; all queues when left out. */
  readonly queues?: readonly string[];
  /** At most this many windows per call (1 to `MAX_EXPIRE_BATCH`). */
  readonly limit: number;
}

/** What {@link JobStore.rescueExpiredLeases} did. */
export interface RescueResult {
  /** Jobs put back to `failed`, due now. */
  readonly retried: number;
  /** Jobs that had no attempt left and went to `dead`. */
  readonly dead: number;
}

/** What {@link JobStore.claimDeadHooks} takes. */
export interface ClaimDeadHooksParams {
  readonly queue: string;
  readonly workerId: string;
  /** At most this many deaths (1 to `MAX_BATCH_SIZE`). */
  readonly limit: number;
  readonly leaseMs: number;
}

/** What {@link JobStore.finishDeadHooks} takes. */
export interface FinishDeadHooksParams {
  readonly workerId: string;
  /** The deaths whose hook ran: `id` is the job's, `attempt` the death's. */
  readonly hooks: readonly JobAttempt[];
}

/** One job, by id: what `getJob`, `cancelJob` and `retryJob` take. */
export interface JobIdParams {
  readonly id: string;
}

/** What {@link JobStore.listAttempts} takes. */
export interface ListAttemptsParams {
  readonly jobId: string;
}

/** What {@link JobStore.countByQueue} takes. */
export interface CountByQueueParams {
  /** Only these queues; every queue with jobs when left out. */
  readonly queues?: readonly string[];
  /** Also count the jobs that succeeded within this many milliseconds. */
  readonly completedSinceMs?: number;
}

/** What {@link JobStore.readQueueGauges} takes. */
export interface ReadQueueGaugesParams {
  /** Exactly these queues; without, every queue that has waiting, running or dead jobs. */
  readonly queues?: readonly string[];
}

/** What {@link JobStore.listJobs} takes. */
export interface ListJobsParams {
  /** Only jobs of this queue. */
  readonly queue?: string;
  /** Only jobs in these states. */
  readonly states?: readonly JobState[];
  /** At most this many jobs (1 to `MAX_PAGE_SIZE`). */
  readonly limit: number;
  /** Only jobs with a smaller id: the last id of the previous page. */
  readonly beforeId?: string;
  /** Only jobs of this group (`group` at enqueue). Not with `serialKey`. */
  readonly group?: string;
  /** Only jobs of this serial line (`serialKey` at enqueue). Not with `group`. */
  readonly serialKey?: string;
}

/** What {@link JobStore.listGroups} takes. */
export interface ListGroupsParams {
  /** Only these queues; every queue that has groups when left out. */
  readonly queues?: readonly string[];
  /** At most this many groups per queue, the busiest first (1 to `MAX_GROUPS_LISTED`). */
  readonly limit: number;
  /**
   * Only groups with running jobs, without counting any waiting job (what
   * a metrics scrape asks for: its cost is bounded by the running jobs).
   * Default false: groups and lines with waiting jobs or a held line too.
   */
  readonly runningOnly?: boolean;
}

/**
 * One group or serial line of a queue as {@link JobStore.listGroups}
 * reports it.
 *
 * @example
 * ```ts
 * const [busiest] = await store.listGroups({ queues: ["sync-tenant"], limit: 1 });
 * if (busiest !== undefined) console.log(`${busiest.key}: ${busiest.running} running, ${busiest.waiting ?? "?"} waiting`);
 * ```
 */
export interface GroupSummary {
  readonly queue: string;
  /** The group's key (`group` at enqueue), or the line's (`serialKey`). */
  readonly key: string;
  /** True for a serial line. */
  readonly serial: boolean;
  readonly running: number;
  /**
   * Jobs `queued` or `failed` (retry scheduled), counted up to
   * `GROUP_WAITING_COUNT_CAP` (that figure means "at least"); `null` when
   * not counted (`runningOnly`).
   */
  readonly waiting: number | null;
  /** The id of the dead job that holds the serial line (see `releaseLine`), or `null`. */
  readonly heldBy: string | null;
}

/** The states a job ends in, which retention may delete. */
export type FinishedState = "succeeded" | "dead" | "cancelled";

/** What {@link JobStore.deleteFinishedBefore} takes. */
export interface DeleteFinishedBeforeParams {
  /** Delete jobs in these states (finished ones only). */
  readonly states: readonly FinishedState[];
  /** Whose `finished_at` is older than this many milliseconds. */
  readonly olderThanMs: number;
  /**
   * At most this many deleted row by row per call (1 to `MAX_BATCH_SIZE`); a
   * store that drops a whole partition of its history may return more.
   */
  readonly limit: number;
  /** Only these queues; all queues when left out. */
  readonly queues?: readonly string[];
  /**
   * Not these queues (not with `queues`): their jobs are kept, as they are
   * kept longer than the rest (a queue's own retention, see
   * `QueueRetention`). A store that drops whole partitions of its history
   * still drops them, keeping these queues' jobs.
   */
  readonly exceptQueues?: readonly string[];
}

/** What {@link JobStore.deleteEffectsBefore} takes. */
export interface DeleteEffectsBeforeParams {
  /** Delete ledger rows recorded longer ago than this many milliseconds. */
  readonly olderThanMs: number;
  /** At most this many per call (1 to `MAX_BATCH_SIZE`). */
  readonly limit: number;
}

/** What {@link JobStore.retryDeadJobs} takes. */
export interface RetryDeadJobsParams {
  readonly queue: string;
  /** At most this many jobs per call (1 to `MAX_BATCH_SIZE`). */
  readonly limit: number;
}

/** What {@link JobStore.releaseLine} takes: a serial line, by its queue and key. */
export interface LineParams {
  readonly queue: string;
  /** The line's serial key (`serialKey` at enqueue). */
  readonly key: string;
}

/** The states {@link JobStore.cancelJobs} may cancel in bulk: jobs no worker holds. */
export type WaitingJobState = "queued" | "failed";

/** What {@link JobStore.cancelJobs} takes. */
export interface CancelJobsParams {
  readonly queue: string;
  /** Only jobs in these states (at least one of `queued`, `failed`): a running job is cancelled by id, never in bulk. */
  readonly states: readonly WaitingJobState[];
  /** At most this many jobs per call (1 to `MAX_BATCH_SIZE`). */
  readonly limit: number;
}

/** What {@link JobStore.runEffectOnce} takes besides the effect. */
export interface RunEffectOnceParams {
  /** The effect's idempotency key, e.g. `invoice:812:email` (1 to `MAX_EFFECT_KEY_LENGTH` characters). */
  readonly key: string;
  /** The job carrying the effect out, recorded with the key. */
  readonly jobId: string;
  /** Serialises the effect's result for the ledger (`null` stores nothing). */
  readonly resultJson: (value: unknown) => string | null;
}

/** What {@link JobStore.runEffectOnce} answers. */
export interface EffectOutcome {
  /** True when this call ran the effect; false when the key was already recorded. */
  readonly ran: boolean;
  /** The effect's result: its return value when it ran here, else the recorded one (`undefined` for none). */
  readonly result: unknown;
}

/** What {@link JobStore.completeInTransaction} takes besides the work. */
export interface CompleteInTransactionParams {
  readonly workerId: string;
  readonly job: JobAttempt;
  /** Serialises `work`'s result for the job's `result` column. */
  readonly resultJson: (value: unknown) => string | null;
}

/** What {@link JobStore.completeInTransaction} answers. */
export interface TransactionalCompletion {
  /** False when the worker no longer owned the attempt: everything was rolled back. */
  readonly applied: boolean;
  /** `work`'s result when applied, else `undefined`. */
  readonly value: unknown;
}
