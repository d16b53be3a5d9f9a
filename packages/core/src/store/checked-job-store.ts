import { ConfigError } from "../errors/config-errors";
import { DEFAULT_MAX_PAYLOAD_BYTES, MAX_PAYLOAD_BYTES_LIMIT } from "../limits";
import type { ClaimedBatch, QueueControls, QueueControlsChange } from "../queue/queue-controls";
import { checkControlsChange } from "../queue/check-controls-change";
import { assertStoredQueueName } from "../validation/names";
import { integerOption } from "../validation/option-checks";
import type { JobRecord } from "../job/job-record";
import type { AttemptRecord } from "./attempt-record";
import { checkNewJob, checkNewJobs } from "./check-new-job";
import * as check from "./check-store-params";
import type { DeadHookClaim } from "./dead-hook-claim";
import type { JobCompletionSource } from "./job-completion-source";
import type { JobLogRecord } from "../job/job-log";
import type { EnqueueResult, JobLogAppend, JobStore, MetaUpdate, NewJob, ProgressWrite, QueueCounts, QueueGauges, StoreTransaction } from "./job-store";
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

/** Options of {@link CheckedJobStore}. */
export interface CheckedJobStoreOptions {
  /**
   * Largest payload the store takes, in bytes of UTF-8 JSON, whatever built
   * the job (a job kind's own `maxPayloadBytes` may be lower). Default
   * `DEFAULT_MAX_PAYLOAD_BYTES` (1 MiB); at most `MAX_PAYLOAD_BYTES_LIMIT`.
   */
  readonly maxPayloadBytes?: number;
}

const NO_RESULTS: readonly EnqueueResult[] = Object.freeze([]);

/**
 * A `JobStore` that checks every argument of every call before handing it
 * to the store it wraps, so that a store needs no checks of its own and
 * every store refuses the same things with the same errors: a queue name
 * with an `InvalidNameError`; a payload, meta or progress value that is
 * too large or that `jsonb` cannot store with a `PayloadError`; any other
 * field with a `ConfigError` naming it. A refused call rejects before the
 * store sees it. What a store alone can judge (whether an id is one it
 * issued, whether a transaction is its own) stays with the store.
 *
 * The calls a worker makes for every batch (claim, lease, finalize) are
 * checked in O(1) per call and per job, with no allocation unless a check
 * refuses; an enqueue's payload and meta are scanned once, for their size
 * and for text `jsonb` cannot store.
 * `JobClient`, `QueueAdmin` and every worker wrap the store they are given
 * (see {@link checkedJobStore}); a driver's registration hands out a
 * checked store, so that operator code calling it directly is checked too.
 *
 * @example
 * ```ts
 * class MyStore implements JobStore { … }           // no argument checks needed
 * container.registerInstance(JOB_STORE, checkedJobStore(new MyStore(), { maxPayloadBytes: 262_144 }));
 * ```
 */
export class CheckedJobStore<Tx = unknown> implements JobStore<Tx> {
  readonly #store: JobStore<Tx>;
  readonly #maxPayloadBytes: number;

  /** Checks `options` (a `ConfigError` naming the option); wraps `store`, which it never calls here. */
  constructor(store: JobStore<Tx>, options: CheckedJobStoreOptions = {}) {
    if (typeof store !== "object" || store === null) throw new ConfigError("store", "must be a JobStore");
    this.#store = store;
    this.#maxPayloadBytes = payloadCeiling(options);
  }

  /** The largest payload this store takes, in bytes of UTF-8 JSON. */
  get maxPayloadBytes(): number {
    return this.#maxPayloadBytes;
  }

  /** The wrapped store's completion hints, if it has them. */
  get completions(): JobCompletionSource | undefined {
    return this.#store.completions;
  }

  enqueue(job: NewJob, transaction?: Tx): Promise<EnqueueResult> {
    return refused(checkNewJob, job, this.#maxPayloadBytes) ?? this.#store.enqueue(job, transaction);
  }

  /** Checks every job first; one that fails refuses the whole batch. An empty batch resolves at once, without the store. */
  enqueueMany(jobs: readonly NewJob[], transaction?: Tx): Promise<readonly EnqueueResult[]> {
    const refusal = refused(checkNewJobs, jobs, this.#maxPayloadBytes);
    if (refusal !== undefined) return refusal;
    return jobs.length === 0 ? Promise.resolve(NO_RESULTS) : this.#store.enqueueMany(jobs, transaction);
  }

  claimBatch(params: ClaimBatchParams): Promise<ClaimedBatch> {
    return refused(check.checkClaimBatch, params) ?? this.#store.claimBatch(params);
  }

  /** Hands the store the change as {@link checkControlsChange} returns it: checked, frozen, with nothing but its three fields. */
  setQueueControls(queue: string, change: QueueControlsChange): Promise<QueueControls> {
    let checked: QueueControlsChange;
    try {
      // A name that breaks the rule reaches the store, which only updates a queues row that already holds it.
      assertStoredQueueName(queue);
      checked = checkControlsChange(change);
    } catch (error) {
      return Promise.reject(error);
    }
    return this.#store.setQueueControls(queue, checked);
  }

  listQueueControls(): Promise<readonly QueueControls[]> {
    return this.#store.listQueueControls();
  }

  extendLeases(params: ExtendLeasesParams): Promise<ExtendedLeases> {
    return refused(check.checkExtendLeases, params) ?? this.#store.extendLeases(params);
  }

  completeJobs(params: CompleteJobsParams): Promise<readonly string[]> {
    return refused(check.checkCompleteJobs, params) ?? this.#store.completeJobs(params);
  }

  scheduleRetries(params: ScheduleRetriesParams): Promise<readonly string[]> {
    return refused(check.checkScheduleRetries, params) ?? this.#store.scheduleRetries(params);
  }

  markJobsDead(params: MarkJobsDeadParams): Promise<readonly string[]> {
    return refused(check.checkMarkJobsDead, params) ?? this.#store.markJobsDead(params);
  }

  rescueExpiredLeases(params: RescueExpiredLeasesParams): Promise<RescueResult> {
    return refused(check.checkRescueExpiredLeases, params) ?? this.#store.rescueExpiredLeases(params);
  }

  claimDeadHooks(params: ClaimDeadHooksParams): Promise<readonly DeadHookClaim[]> {
    return refused(check.checkClaimDeadHooks, params) ?? this.#store.claimDeadHooks(params);
  }

  finishDeadHooks(params: FinishDeadHooksParams): Promise<readonly string[]> {
    return refused(check.checkFinishDeadHooks, params) ?? this.#store.finishDeadHooks(params);
  }

  cancelJob(params: JobIdParams): Promise<boolean> {
    return refused(check.checkJobIdParams, params) ?? this.#store.cancelJob(params);
  }

  cancelJobs(params: CancelJobsParams): Promise<number> {
    return refused(check.checkCancelJobs, params) ?? this.#store.cancelJobs(params);
  }

  retryJob(params: JobIdParams): Promise<boolean> {
    return refused(check.checkJobIdParams, params) ?? this.#store.retryJob(params);
  }

  runJobNow(params: JobIdParams): Promise<boolean> {
    return refused(check.checkJobIdParams, params) ?? this.#store.runJobNow(params);
  }

  writeProgress(params: ProgressWrite): Promise<boolean> {
    return refused(check.checkProgressWrite, params) ?? this.#store.writeProgress(params);
  }

  updateJobMeta(params: MetaUpdate): Promise<boolean> {
    return refused(check.checkMetaUpdate, params) ?? this.#store.updateJobMeta(params);
  }

  appendJobLog(params: JobLogAppend): Promise<boolean> {
    return refused(check.checkJobLogAppend, params) ?? this.#store.appendJobLog(params);
  }

  listJobLogs(params: ListAttemptsParams): Promise<readonly JobLogRecord[]> {
    return refused(check.checkListAttempts, params) ?? this.#store.listJobLogs(params);
  }

  listAttempts(params: ListAttemptsParams): Promise<readonly AttemptRecord[]> {
    return refused(check.checkListAttempts, params) ?? this.#store.listAttempts(params);
  }

  getJob(params: JobIdParams): Promise<JobRecord | undefined> {
    return refused(check.checkJobIdParams, params) ?? this.#store.getJob(params);
  }

  countByQueue(params?: CountByQueueParams): Promise<readonly QueueCounts[]> {
    return refused(check.checkCountByQueue, params) ?? this.#store.countByQueue(params);
  }

  readQueueGauges(params?: ReadQueueGaugesParams): Promise<readonly QueueGauges[]> {
    return refused(check.checkReadQueueGauges, params) ?? this.#store.readQueueGauges(params);
  }

  listJobs(params: ListJobsParams): Promise<readonly JobRecord[]> {
    return refused(check.checkListJobs, params) ?? this.#store.listJobs(params);
  }

  deleteFinishedBefore(params: DeleteFinishedBeforeParams): Promise<number> {
    return refused(check.checkDeleteFinishedBefore, params) ?? this.#store.deleteFinishedBefore(params);
  }

  deleteEffectsBefore(params: DeleteEffectsBeforeParams): Promise<number> {
    return refused(check.checkDeleteEffectsBefore, params) ?? this.#store.deleteEffectsBefore(params);
  }

  retryDeadJobs(params: RetryDeadJobsParams): Promise<number> {
    return refused(check.checkRetryDeadJobs, params) ?? this.#store.retryDeadJobs(params);
  }

  ping(): Promise<void> {
    return this.#store.ping();
  }

  runEffectOnce(params: RunEffectOnceParams, effect: (transaction: StoreTransaction) => Promise<unknown>): Promise<EffectOutcome> {
    return refused(check.checkRunEffectOnce, params, effect) ?? this.#store.runEffectOnce(params, effect);
  }

  completeInTransaction(params: CompleteInTransactionParams, work: (transaction: StoreTransaction) => Promise<unknown>): Promise<TransactionalCompletion> {
    return refused(check.checkCompleteInTransaction, params, work) ?? this.#store.completeInTransaction(params, work);
  }
}

/**
 * `store` wrapped in a {@link CheckedJobStore}, or `store` itself when it
 * is one already (then `options` are not read): wrapping twice checks once. Core wraps every store it is
 * handed; call it yourself when you register a store of your own, to give
 * it a payload ceiling other than 1 MiB or to have calls made directly on
 * the registered store checked too.
 *
 * @example
 * ```ts
 * container.registerInstance(JOB_STORE, checkedJobStore(new MyStore()));
 * ```
 */
export function checkedJobStore<Tx>(store: JobStore<Tx>, options?: CheckedJobStoreOptions): CheckedJobStore<Tx> {
  return store instanceof CheckedJobStore ? store : new CheckedJobStore(store, options);
}

/** The payload ceiling `options` ask for, checked (a `ConfigError` naming `maxPayloadBytes`). */
export function payloadCeiling(options: CheckedJobStoreOptions): number {
  if (typeof options !== "object" || options === null) throw new ConfigError("options", "must be an object");
  return integerOption("maxPayloadBytes", options.maxPayloadBytes ?? DEFAULT_MAX_PAYLOAD_BYTES, 2, MAX_PAYLOAD_BYTES_LIMIT);
}

/** Runs `checks` on the arguments: a rejected promise with what it threw, or `undefined` when it threw nothing. */
function refused<P, E>(checks: (params: P, extra: E) => void, params: P, extra: E): Promise<never> | undefined;
function refused<P>(checks: (params: P) => void, params: P): Promise<never> | undefined;
function refused<P, E>(checks: (params: P, extra?: E) => void, params: P, extra?: E): Promise<never> | undefined {
  try {
    checks(params, extra);
    return undefined;
  } catch (refusal) {
    return Promise.reject(refusal);
  }
}
