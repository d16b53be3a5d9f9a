import type { JobRecord } from "../job/job-record";
import type { JobState } from "../job/job-state";
import type { ClaimedBatch, QueueControls, QueueControlsChange } from "../queue/queue-controls";
import type { AttemptRecord } from "./attempt-record";
import type { JobLogRecord } from "../job/job-log";
import type { DeadHookClaim } from "./dead-hook-claim";
import type { JobCompletionSource } from "./job-completion-source";
import type {
  CancelJobsParams,
  ClaimBatchParams,
  ClaimDeadHooksParams,
  CompleteInTransactionParams,
  CompleteJobsParams,
  CountByQueueParams,
  DeleteEffectsBeforeParams,
  DeleteFinishedBeforeParams,
  EffectOutcome,
  ExtendedLeases,
  ExtendLeasesParams,
  FinishDeadHooksParams,
  JobIdParams,
  ListAttemptsParams,
  ListJobsParams,
  MarkJobsDeadParams,
  ReadQueueGaugesParams,
  RescueExpiredLeasesParams,
  RescueResult,
  RetryDeadJobsParams,
  RunEffectOnceParams,
  ScheduleRetriesParams,
  TransactionalCompletion,
} from "./store-params";

/**
 * A job ready to be written: what `enqueue` and `enqueueMany` take.
 * The payload is already serialised JSON text (see `serializePayload`).
 */
export interface NewJob {
  readonly queue: string;
  /** The payload as JSON text. */
  readonly payloadJson: string;
  readonly priority: number;
  readonly maxAttempts: number;
  /** Per-attempt time limit in milliseconds, or `null`. */
  readonly timeoutMs: number | null;
  /** Run at this instant; `null` means "now" on the database clock. */
  readonly runAt: Date | null;
  /** Added to the database's `now()` (or to `runAt`) to get `run_at`. */
  readonly delayMs: number;
  /** Unique among the queue's active jobs, or `null`. */
  readonly dedupeKey: string | null;
  /** The job's `meta` as JSON text of an object (see `serializeMeta`); `null` or left out for none. */
  readonly metaJson?: string | null;
  /**
   * When an active job holds the dedupe key: `keep` it (the default), or
   * `replace` its payload, run time, priority, attempts, timeout and meta
   * with this job's, if it is still `queued` (one that started is kept).
   */
  readonly onDuplicate?: "keep" | "replace";
}

/** What enqueue says about one job. */
export interface EnqueueResult {
  readonly id: string;
  /** True when an active job of the queue already held the dedupe key; `id` is that job's. */
  readonly duplicate: boolean;
  /** True when that job was `queued` and took this enqueue's payload and run time (`onDuplicate: "replace"`). */
  readonly replaced?: boolean;
}

/** Identifies one attempt of one job: the fence every write after a claim checks. */
export interface JobAttempt {
  readonly id: string;
  readonly attempt: number;
}

/** A successful attempt to record. */
export interface CompletedJob extends JobAttempt {
  /** The handler's return value as JSON text, or `null`. */
  readonly resultJson: string | null;
  readonly durationMs: number;
}

/** The error stored with a failed attempt. */
export interface JobFailure {
  /** Stack and causes, already capped (see `describeError`). */
  readonly message: string;
  /** A stable code such as `STINT_TIMEOUT`, or `null`. */
  readonly code: string | null;
  /**
   * The error's own one-line `Name: message` (see `errorSummary`) for the
   * attempt's history record; when left out, the first line of `message`.
   */
  readonly summary?: string;
}

/** An attempt that failed (or was snoozed or given back) and runs again later. */
export interface RetryingJob extends JobAttempt {
  /** Added to the database's `now()` to get the next `run_at`. */
  readonly delayMs: number;
  /** Stored as the job's error; `null` when nothing failed (the previous error is kept). */
  readonly failure: JobFailure | null;
  /** `false` gives the attempt back: `max_attempts` goes up by one. */
  readonly spendAttempt: boolean;
  /**
   * How the attempt ended, for its history record (see `listAttempts`);
   * `null` records nothing (an attempt given back before its handler
   * started). Left out: `"failed"` with a failure, nothing without one.
   */
  readonly outcome?: "failed" | "lease-lost" | "shutdown" | "snoozed" | null;
  /** How long the attempt ran, as the worker measured it; `null` or left out: the database clock's figure since the claim. */
  readonly durationMs?: number | null;
}

/** An attempt after which the job gives up. */
export interface DeadJob extends JobAttempt {
  readonly failure: JobFailure;
  /** How the attempt ended, for its history record: `"dead"` (the default) or `"lease-lost"` (it was the last attempt). */
  readonly outcome?: "dead" | "lease-lost";
  /** How long the attempt ran, as the worker measured it; `null` or left out: the database clock's figure since the claim. */
  readonly durationMs?: number | null;
}

/**
 * A handler's latest progress to store on its job (`ctx.progress`), fenced
 * like an outcome on id, owner and attempt.
 */
export interface ProgressWrite {
  readonly workerId: string;
  readonly job: JobAttempt;
  /** The value as JSON text (see `serializeProgress`). */
  readonly progressJson: string;
}

/**
 * A handler's `ctx.updateMeta` patch, merged (shallowly) into its job's
 * `meta`, fenced like an outcome on id, owner and attempt.
 */
export interface MetaUpdate {
  readonly workerId: string;
  readonly job: JobAttempt;
  /** The keys to set, as the JSON text of an object (see `serializeMeta`). */
  readonly patchJson: string;
}

/**
 * `ctx.log` lines to append to the running attempt's log, fenced like an
 * outcome on id, owner and attempt.
 */
export interface JobLogAppend {
  readonly workerId: string;
  readonly job: JobAttempt;
  /** Each line as JSON text (see `serializeLogLine`), oldest first: at most `MAX_JOB_LOG_LINES`. */
  readonly linesJson: readonly string[];
  /** Lines the worker already dropped before these (its buffer keeps the newest). */
  readonly droppedLines: number;
}

/**
 * The backend's transaction handed to `ctx.once` and `ctx.transaction`
 * callbacks: a Kysely `Transaction` for `@stint/postgres-driver`. Typed
 * loosely so a callback can declare the exact type it expects.
 */
export type StoreTransaction = any;

/** Per-queue figures for dashboards and the CLI. */
export interface QueueCounts {
  readonly queue: string;
  readonly counts: Readonly<Record<JobState, number>>;
  /** Jobs whose `run_at` has passed and that wait for a worker. */
  readonly due: number;
  /** Age in milliseconds of the oldest due job, or `null` when none is due (queue lag). */
  readonly oldestDueAgeMs: number | null;
  /** Jobs that succeeded within the last `completedSinceMs` (present only when asked for). */
  readonly completedSince?: number;
}

/**
 * What a metrics scrape reads of one queue: its waiting, running and dead
 * jobs (never the succeeded history), the jobs due now and the queue lag.
 *
 * @example
 * ```ts
 * const [invoices] = await store.readQueueGauges({ queues: ["send-invoice"] });
 * if ((invoices?.oldestDueAgeMs ?? 0) > 60_000) console.warn("send-invoice lags by over a minute");
 * ```
 */
export interface QueueGauges {
  readonly queue: string;
  readonly queued: number;
  /** Failed attempts with a retry scheduled. */
  readonly failed: number;
  readonly running: number;
  readonly dead: number;
  /** Jobs `queued` or `failed` whose `run_at` has passed. */
  readonly due: number;
  /** Age in milliseconds of the oldest due job, or `null` when none is due. */
  readonly oldestDueAgeMs: number | null;
}

/**
 * The storage contract every backend implements. Core talks only to this
 * interface; `@stint/postgres-driver` implements it with Kysely and pg.
 *
 * Every write after a claim is fenced on `id + workerId + attempt` and says
 * whether it applied: losing a lease is a result, not an exception.
 * Infrastructure failures reject with `InfrastructureError`.
 *
 * `Tx` is the backend's transaction type: pass one to `enqueue` and the job
 * exists if and only if that transaction commits.
 */
export interface JobStore<Tx = unknown> {
  /**
   * Hints for waiters when a job may have finished (see `client.waitFor`);
   * without it, waiters find out by polling `getJob`. `undefined` is said
   * explicitly by a wrapper of a store that has none (a `CheckedJobStore`).
   */
  readonly completions?: JobCompletionSource | undefined;

  /** Inserts one job, or returns the active job holding its dedupe key. */
  enqueue(job: NewJob, transaction?: Tx): Promise<EnqueueResult>;

  /** Inserts many jobs in one statement; results are in input order. */
  enqueueMany(jobs: readonly NewJob[], transaction?: Tx): Promise<readonly EnqueueResult[]>;

  /**
   * Claims up to `limit` due jobs of `queue` (and, unless `takeOverExpired`
   * is false, running jobs of `queue` whose lease expired), highest priority
   * first, then oldest `run_at`; returns them in that order.
   * Sets them `running`, owned by `workerId` until `now() + leaseMs`, and
   * counts the attempt. Never returns more than `limit` rows. A paused
   * queue's claim takes nothing, and its running cap and rate limit bound
   * how many it takes, however many workers claim at once; the result's
   * `hold` says when that happened.
   */
  claimBatch(params: ClaimBatchParams): Promise<ClaimedBatch>;

  /**
   * Changes the operator controls of `queue` (pause, running cap, rate
   * limit) for every worker; returns them as they are now. Workers of a
   * queue that may take more now are woken.
   */
  setQueueControls(queue: string, change: QueueControlsChange): Promise<QueueControls>;

  /** The controls of every queue an operator has set something on, by queue name. */
  listQueueControls(): Promise<readonly QueueControls[]>;

  /**
   * Extends the leases the worker still holds, in one call; returns the ids
   * it extended, and, of the others, those an operator cancelled while the
   * worker held them (the heartbeat stops their handlers).
   */
  extendLeases(params: ExtendLeasesParams): Promise<ExtendedLeases>;

  /** Marks many attempts succeeded in one statement; returns the ids that applied. */
  completeJobs(params: CompleteJobsParams): Promise<readonly string[]>;

  /**
   * Schedules another attempt of many jobs in one statement, each at
   * `now() + delayMs`: state `failed` with the failure recorded, or `queued`
   * when `failure` is `null` (a snooze, a shutdown release: nothing failed;
   * the previous error is kept). With `spendAttempt: false` the job gets its
   * attempt back by raising `max_attempts` by one, so `attempts` never
   * decreases. Returns the ids that applied.
   */
  scheduleRetries(params: ScheduleRetriesParams): Promise<readonly string[]>;

  /**
   * Gives up on many jobs in one statement: state `dead` with each one's
   * failure, and, in the same statement, a pending `onDead` hook for each
   * death (see `claimDeadHooks`). Returns the ids that applied.
   */
  markJobsDead(params: MarkJobsDeadParams): Promise<readonly string[]>;

  /**
   * Handles running jobs whose lease expired without waiting for a claim:
   * those with attempts left go back to `failed` (due now), the others to
   * `dead` with `STINT_WORKER_DIED` (and a pending `onDead` hook each, as
   * `markJobsDead`). One conditional update, at most `limit` rows.
   */
  rescueExpiredLeases(params: RescueExpiredLeasesParams): Promise<RescueResult>;

  /**
   * Claims up to `limit` deaths of `queue` whose `onDead` hook has not run:
   * never claimed, or claimed by a worker whose claim lapsed (it died
   * inside the hook). Each is owned by `workerId` until `now() + leaseMs`,
   * with one more delivery counted; rows another claimer holds are skipped,
   * so two workers never get the same death while its claim holds.
   */
  claimDeadHooks(params: ClaimDeadHooksParams): Promise<readonly DeadHookClaim[]>;

  /**
   * Records the hooks of these deaths (`id` is the job's, `attempt` the
   * death's) as done, fenced on the claim: only those `workerId` still
   * holds. Returns the job ids that applied.
   */
  finishDeadHooks(params: FinishDeadHooksParams): Promise<readonly string[]>;

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
   * Stores a running attempt's latest progress on its job, fenced on id,
   * owner and attempt (state `running`): false when the worker no longer
   * owns the attempt, and nothing changed.
   */
  writeProgress(params: ProgressWrite): Promise<boolean>;

  /**
   * Merges `patchJson` into a running attempt's job `meta` (top-level keys
   * replace), fenced on id, owner and attempt (state `running`): false when
   * the worker no longer owns the attempt, and nothing changed. Throws
   * `PayloadError` naming the size when the merged meta would be over
   * `MAX_META_BYTES`.
   */
  updateJobMeta(params: MetaUpdate): Promise<boolean>;

  /**
   * Appends `ctx.log` lines to the running attempt's log, fenced like
   * {@link writeProgress}: false when the worker no longer owns the
   * attempt. An attempt keeps its newest `MAX_JOB_LOG_LINES` lines within
   * `MAX_JOB_LOG_BYTES`, counting the ones it drops.
   */
  appendJobLog(params: JobLogAppend): Promise<boolean>;

  /** The `ctx.log` lines of each attempt of a job that logged, by attempt number. Empty for a job that does not exist. */
  listJobLogs(params: ListAttemptsParams): Promise<readonly JobLogRecord[]>;

  /**
   * The history of a job's attempts, oldest first: one record per attempt
   * that did not succeed (written in the same statement as the outcome, the
   * takeover of a lapsed lease, or the cancel), then the successful attempt,
   * read from the job row. Empty for a job that does not exist.
   */
  listAttempts(params: ListAttemptsParams): Promise<readonly AttemptRecord[]>;

  /** One job, or `undefined`. */
  getJob(params: JobIdParams): Promise<JobRecord | undefined>;

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
   * Jobs newest first (by id), optionally of one queue and some states;
   * pass the last id seen as `beforeId` for the next page.
   */
  listJobs(params: ListJobsParams): Promise<readonly JobRecord[]>;

  /**
   * Deletes finished jobs in `states` whose `finished_at` is older than
   * `olderThanMs`, oldest first, skipping rows locked by others, with their
   * attempt history; never a job in another state, nor one that is active
   * again. Returns how many jobs it deleted; call again until it returns
   * less than `limit`.
   *
   * At most `limit` jobs go one by one per call. A store that keeps its
   * history in partitions may delete more at once, when it drops a whole
   * partition whose jobs are all past the cutoff, and may keep a job past
   * the cutoff until its whole partition is — the PostgreSQL store, for a
   * retention of a day or more and no `queues`, keeps a job until its UTC
   * day is past the cutoff, at most a day longer. With `queues`, the
   * deletion is exact, row by row.
   */
  deleteFinishedBefore(params: DeleteFinishedBeforeParams): Promise<number>;

  /**
   * Deletes at most `limit` rows of the effects ledger (see `runEffectOnce`)
   * recorded more than `olderThanMs` ago, oldest first, skipping rows locked
   * by others. Returns how many; a deleted key can run its effect again.
   */
  deleteEffectsBefore(params: DeleteEffectsBeforeParams): Promise<number>;

  /**
   * Runs up to `limit` dead jobs of `queue` again now, each with a fresh
   * attempt budget (as `retryJob`); jobs whose dedupe key is held by an
   * active job are left dead. Returns how many it queued.
   */
  retryDeadJobs(params: RetryDeadJobsParams): Promise<number>;

  /** Resolves when the store can reach its database (readiness probes). */
  ping(): Promise<void>;

  /**
   * Runs `effect` at most once per `key` (for as long as the ledger keeps
   * the key; see `deleteEffectsBefore`): in one transaction it
   * records the key in the effects ledger (waiting if another transaction
   * holds it), runs `effect` with that transaction, and stores its result.
   * When the key is already recorded, `effect` is not run and the stored
   * result comes back with `ran: false`. Database writes made through the
   * transaction therefore happen exactly once; what `effect` does outside
   * it (an e-mail) happens again only if the process dies between doing it
   * and the commit.
   */
  runEffectOnce(params: RunEffectOnceParams, effect: (transaction: StoreTransaction) => Promise<unknown>): Promise<EffectOutcome>;

  /**
   * Runs `work` and marks the attempt succeeded in the same transaction,
   * fenced like `completeJobs`: if the worker no longer owns the attempt,
   * everything `work` wrote is rolled back and `applied` is false.
   */
  completeInTransaction(params: CompleteInTransactionParams, work: (transaction: StoreTransaction) => Promise<unknown>): Promise<TransactionalCompletion>;
}
