import { ConfigError } from "../../errors/config-errors";
import type { ClaimedJob, JobRecord } from "../../job/job-record";
import type { ClaimedBatch, QueueControls, QueueControlsChange } from "../../queue/queue-controls";
import type { AttemptRecord } from "../../store/attempt-record";
import type { DeadHookClaim } from "../../store/dead-hook-claim";
import type { JobLogRecord } from "../../job/job-log";
import type { EnqueueResult, JobLogAppend, JobStore, MetaUpdate, NewJob, ProgressWrite, QueueCounts, QueueGauges } from "../../store/job-store";
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
} from "../../store/store-params";
import type {
  FireDueSchedulesParams,
  RemoveScheduleParams,
  ScheduleFire,
  ScheduleRecord,
  ScheduleStore,
  SyncSchedulesParams,
  SyncSchedulesResult,
  UpsertScheduleParams,
  UpsertScheduleResult,
} from "../../store/schedule-store";
import { systemClock, type Clock } from "../../time/clock";
import { rejectUnknownOptions } from "../../validation/option-checks";
import { claimBatch } from "./memory-claim";
import { claimDeadHooks, finishDeadHooks } from "./memory-dead-hooks";
import { completeInTransaction, runEffectOnce } from "./memory-effects";
import { enqueueBatch, enqueueOne } from "./memory-enqueue";
import { completeJobs, extendLeases, markJobsDead, scheduleRetries, writeProgress } from "./memory-finalize";
import { listAttempts } from "./memory-history";
import { appendJobLog, listJobLogs, updateJobMeta } from "./memory-job-writes";
import { rescueExpiredLeases } from "./memory-lease-rescue";
import { cancelJob, cancelJobs, retryDeadJobs, retryJob, runJobNow } from "./memory-operator-calls";
import { listQueueControls, setQueueControls } from "./memory-queue-controls";
import { countByQueue, getJob, listJobs, readQueueGauges } from "./memory-reads";
import { deleteEffectsBefore, deleteFinishedBefore } from "./memory-retention";
import { fireDueSchedules, listSchedules, removeSchedule, syncSchedules, upsertSchedule } from "./memory-schedules";
import { startJob, type StartJobParams } from "./memory-start-job";
import { MemoryState } from "./memory-state";
import { givenTransaction, inTransaction, type MemoryTransaction } from "./memory-transaction";

/** Options of {@link InMemoryJobStore}. */
export interface InMemoryJobStoreOptions {
  /**
   * The store's clock, what PostgreSQL's `now()` is to the PostgreSQL
   * store: leases, `run_at`, finish times, the rate limits' buckets and the
   * retention cutoffs all read it. Give a worker the same `ManualClock` to
   * move both through time. Default: the system clock.
   */
  readonly clock?: Clock;
}

/**
 * A `JobStore` that keeps everything in memory, for tests that need no
 * database. It behaves as the PostgreSQL store does and passes the same
 * conformance suite (`describeJobStoreConformance`): claim order (priority,
 * then `run_at`, then id), limits, leases and their expiry on the store's
 * clock, the owner and attempt fence on every write after a claim, dedupe
 * keys (keep, replace, debounce), batch and transactional enqueue, the
 * queue controls (pause, running cap, rate limit) applied at claim, counts
 * and gauges, listing, retention, bulk retry, effects run once per key,
 * attempt history, meta and progress, and the pending `onDead` hook of
 * every death. It is a `ScheduleStore` too, and passes that conformance
 * suite (`describeScheduleStoreConformance`): declared schedules expiring
 * on its clock after the grace, runtime ones, and fires once per dedupe key.
 *
 * Its transaction (`Tx`) is a {@link MemoryTransaction}: a unit of work
 * whose writes apply when it commits. Every call runs to completion
 * without yielding, so it is atomic as one statement is. It checks no more
 * of its arguments than it needs to keep its data sound: give it what
 * `buildNewJob` and the worker give a store.
 *
 * @example
 * ```ts
 * const clock = new ManualClock();
 * const store = new InMemoryJobStore({ clock });
 * const worker = new SendInvoiceWorker(store, createSilentLogger(), { clock });
 * await new JobClient(store).enqueue(SendInvoice, { invoiceId: 812 });
 * const summary = await worker.start(); // drains the queue
 * ```
 */
export class InMemoryJobStore implements JobStore<MemoryTransaction>, ScheduleStore {
  readonly #state: MemoryState;

  constructor(options: InMemoryJobStoreOptions = {}) {
    if (typeof options !== "object" || options === null) throw new ConfigError("options", "must be an object");
    rejectUnknownOptions("options", options, ["clock"]);
    const clock = options.clock ?? systemClock;
    if (typeof clock?.now !== "function" || typeof clock.sleep !== "function") throw new ConfigError("clock", "must be a Clock (now and sleep)");
    this.#state = new MemoryState(clock);
  }

  /** The clock the store reads. */
  get clock(): Clock {
    return this.#state.clock;
  }

  /**
   * Runs `work` in a transaction of this store: commits when it resolves,
   * rolls back (every write made through it dropped) and rethrows when it
   * throws. Pass the transaction to `enqueue` (or as the `transaction`
   * enqueue option) and the job exists if and only if it commits.
   *
   * @example
   * ```ts
   * await store.transaction((trx) => client.enqueue(SendInvoice, { invoiceId: 812 }, { transaction: trx }));
   * ```
   */
  async transaction<T>(work: (transaction: MemoryTransaction) => Promise<T>): Promise<T> {
    if (typeof work !== "function") throw new ConfigError("work", "must be a function");
    return (await inTransaction(work)).value;
  }

  /**
   * Inserts a job and claims it at once for `workerId` as attempt
   * `attempt` (the attempts before it counted, none of them in the
   * history), whatever else the queue holds and whatever its controls say:
   * a test's way to put one attempt in a given state (`runJob` uses it).
   *
   * @example
   * ```ts
   * const job = await store.startJob({ job: buildNewJob(SendInvoice, { invoiceId: 812 }), workerId: "w1", leaseMs: 60_000, attempt: 3 });
   * ```
   */
  async startJob(params: StartJobParams): Promise<ClaimedJob> {
    return startJob(this.#state, params);
  }

  async enqueue(job: NewJob, transaction?: MemoryTransaction): Promise<EnqueueResult> {
    return enqueueOne(this.#state, job, givenTransaction(transaction));
  }

  async enqueueMany(jobs: readonly NewJob[], transaction?: MemoryTransaction): Promise<readonly EnqueueResult[]> {
    return enqueueBatch(this.#state, jobs, givenTransaction(transaction));
  }

  async claimBatch(params: ClaimBatchParams): Promise<ClaimedBatch> {
    return claimBatch(this.#state, params);
  }

  async setQueueControls(queue: string, change: QueueControlsChange): Promise<QueueControls> {
    return setQueueControls(this.#state, queue, change);
  }

  async listQueueControls(): Promise<readonly QueueControls[]> {
    return listQueueControls(this.#state);
  }

  async extendLeases(params: ExtendLeasesParams): Promise<ExtendedLeases> {
    return extendLeases(this.#state, params);
  }

  async completeJobs(params: CompleteJobsParams): Promise<readonly string[]> {
    return completeJobs(this.#state, params);
  }

  async scheduleRetries(params: ScheduleRetriesParams): Promise<readonly string[]> {
    return scheduleRetries(this.#state, params);
  }

  async markJobsDead(params: MarkJobsDeadParams): Promise<readonly string[]> {
    return markJobsDead(this.#state, params);
  }

  async rescueExpiredLeases(params: RescueExpiredLeasesParams): Promise<RescueResult> {
    return rescueExpiredLeases(this.#state, params);
  }

  async claimDeadHooks(params: ClaimDeadHooksParams): Promise<readonly DeadHookClaim[]> {
    return claimDeadHooks(this.#state, params);
  }

  async finishDeadHooks(params: FinishDeadHooksParams): Promise<readonly string[]> {
    return finishDeadHooks(this.#state, params);
  }

  async cancelJob(params: JobIdParams): Promise<boolean> {
    return cancelJob(this.#state, params.id);
  }

  async cancelJobs(params: CancelJobsParams): Promise<number> {
    return cancelJobs(this.#state, params);
  }

  async retryJob(params: JobIdParams): Promise<boolean> {
    return retryJob(this.#state, params.id);
  }

  async runJobNow(params: JobIdParams): Promise<boolean> {
    return runJobNow(this.#state, params.id);
  }

  async writeProgress(params: ProgressWrite): Promise<boolean> {
    return writeProgress(this.#state, params);
  }

  async updateJobMeta(params: MetaUpdate): Promise<boolean> {
    return updateJobMeta(this.#state, params);
  }

  async appendJobLog(params: JobLogAppend): Promise<boolean> {
    return appendJobLog(this.#state, params);
  }

  async listJobLogs(params: ListAttemptsParams): Promise<readonly JobLogRecord[]> {
    return listJobLogs(this.#state, params.jobId);
  }

  async listAttempts(params: ListAttemptsParams): Promise<readonly AttemptRecord[]> {
    return listAttempts(this.#state, params.jobId);
  }

  async getJob(params: JobIdParams): Promise<JobRecord | undefined> {
    return getJob(this.#state, params.id);
  }

  async countByQueue(params?: CountByQueueParams): Promise<readonly QueueCounts[]> {
    return countByQueue(this.#state, params);
  }

  async readQueueGauges(params?: ReadQueueGaugesParams): Promise<readonly QueueGauges[]> {
    return readQueueGauges(this.#state, params);
  }

  async listJobs(params: ListJobsParams): Promise<readonly JobRecord[]> {
    return listJobs(this.#state, params);
  }

  async deleteFinishedBefore(params: DeleteFinishedBeforeParams): Promise<number> {
    return deleteFinishedBefore(this.#state, params);
  }

  async deleteEffectsBefore(params: DeleteEffectsBeforeParams): Promise<number> {
    return deleteEffectsBefore(this.#state, params);
  }

  async retryDeadJobs(params: RetryDeadJobsParams): Promise<number> {
    return retryDeadJobs(this.#state, params);
  }

  async ping(): Promise<void> {}

  /** `effect` gets a {@link MemoryTransaction}; an error it throws comes back unchanged, after the rollback. */
  async runEffectOnce(params: RunEffectOnceParams, effect: (transaction: MemoryTransaction) => Promise<unknown>): Promise<EffectOutcome> {
    return runEffectOnce(this.#state, params, effect);
  }

  /** `work` gets a {@link MemoryTransaction}; an error it throws comes back unchanged, after the rollback. */
  async completeInTransaction(
    params: CompleteInTransactionParams,
    work: (transaction: MemoryTransaction) => Promise<unknown>,
  ): Promise<TransactionalCompletion> {
    return completeInTransaction(this.#state, params, work);
  }

  async syncSchedules(params: SyncSchedulesParams): Promise<SyncSchedulesResult> {
    return syncSchedules(this.#state, params);
  }

  async upsertSchedule(params: UpsertScheduleParams): Promise<UpsertScheduleResult> {
    return upsertSchedule(this.#state, params);
  }

  async removeSchedule(params: RemoveScheduleParams): Promise<ScheduleRecord | undefined> {
    return removeSchedule(this.#state, params.name);
  }

  async listSchedules(): Promise<readonly ScheduleRecord[]> {
    return listSchedules(this.#state);
  }

  async fireDueSchedules(params: FireDueSchedulesParams): Promise<readonly ScheduleFire[]> {
    return fireDueSchedules(this.#state, params);
  }
}
