import {
  assertQueueName,
  assertSqlIdentifier,
  assertStorableKey,
  ConfigError,
  DEFAULT_MAX_PAYLOAD_BYTES,
  MAX_PAYLOAD_BYTES_LIMIT,
  integerOption,
  JOB_STATES,
  MAX_PROGRESS_BYTES,
  assertPayloadSize,
  assertStorableJson,
  type AttemptRecord,
  type ProgressWrite,
  numberOption,
  rejectUnknownOptions,
  type ClaimedBatch,
  checkControlsChange,
  type QueueControls,
  type QueueControlsChange,
  type DeadHookClaim,
  type EnqueueResult,
  type JobCompletionSource,
  type JobRecord,
  type JobStore,
  type NewJob,
  type QueueCounts,
  type QueueGauges,
  type ScheduleFire,
  type ScheduleRecord,
  type ScheduleStore,
  type StoreTransaction,
  type ClaimBatchParams,
  type ExtendLeasesParams,
  type CompleteJobsParams,
  type ScheduleRetriesParams,
  type MarkJobsDeadParams,
  type RescueExpiredLeasesParams,
  type RescueResult,
  type ClaimDeadHooksParams,
  type FinishDeadHooksParams,
  type JobIdParams,
  type ListAttemptsParams,
  type CountByQueueParams,
  type ReadQueueGaugesParams,
  type ListJobsParams,
  type DeleteFinishedBeforeParams,
  type DeleteEffectsBeforeParams,
  type RetryDeadJobsParams,
  type RunEffectOnceParams,
  type EffectOutcome,
  type CompleteInTransactionParams,
  type TransactionalCompletion,
  type SyncSchedulesParams,
  type FireDueSchedulesParams,
} from "@stint/core";
import type { Kysely, Transaction } from "kysely";
import { checkNewJob, checkNewJobs, checkScheduleSpec } from "./check-new-job";
import { interpretError } from "./interpret-error";
import { assertKysely } from "./is-kysely";
import { CallbackFailure } from "./queries/callback-failure";
import { cancelJob } from "./queries/cancel-job";
import { claimBatch } from "./queries/claim-batch";
import { claimDeadHooks } from "./queries/claim-dead-hooks";
import { completeInTransaction } from "./queries/complete-in-transaction";
import { completeJobs } from "./queries/complete-jobs";
import { countByQueue } from "./queries/count-by-queue";
import { readQueueGauges } from "./queries/read-queue-gauges";
import { deleteEffectsBefore } from "./queries/delete-effects-before";
import { deleteFinishedBefore } from "./queries/delete-finished-before";
import { enqueue } from "./queries/enqueue";
import { enqueueMany } from "./queries/enqueue-many";
import { extendLeases } from "./queries/extend-leases";
import { finishDeadHooks } from "./queries/finish-dead-hooks";
import { fireDueSchedules } from "./queries/fire-due-schedules";
import { getJob } from "./queries/get-job";
import { isJobId } from "./queries/job-row";
import { listAttempts } from "./queries/list-attempts";
import { listJobs } from "./queries/list-jobs";
import { listSchedules } from "./queries/list-schedules";
import { markJobsDead } from "./queries/mark-jobs-dead";
import { ping } from "./queries/ping";
import { rescueExpiredLeases } from "./queries/rescue-expired-leases";
import { retryDeadJobs } from "./queries/retry-dead-jobs";
import { retryJob } from "./queries/retry-job";
import { runEffectOnce } from "./queries/run-effect-once";
import { scheduleRetries } from "./queries/schedule-retries";
import { syncSchedules } from "./queries/sync-schedules";
import { writeProgress } from "./queries/write-progress";
import { listQueueControls, setQueueControls } from "./queries/queue-controls";
import { DEFAULT_SCHEMA } from "./schema/default-schema";

/** Options of {@link PostgresJobStore}. */
export interface PostgresJobStoreOptions {
  /** The main pool: enqueues, claims and operator queries. */
  readonly db: Kysely<any>;
  /** The schema that `migrate` created. Default `"stint"`. */
  readonly schema?: string;
  /**
   * A separate small pool for lease extensions and finalizes, so that
   * handler queries exhausting the main pool cannot starve the heartbeat.
   * Defaults to `db`.
   */
  readonly controlDb?: Kysely<any>;
  /**
   * Largest payload the store inserts, in bytes of UTF-8 JSON, whatever
   * built the job (a job kind's own `maxPayloadBytes` may be lower). A
   * bigger one is refused with a `PayloadError` before any SQL runs; an
   * `enqueueMany` batch holding one is refused whole. Default 1 MiB.
   */
  readonly maxPayloadBytes?: number;
  /**
   * Hints for `client.waitFor` when a job finishes (a
   * `PostgresCompletionSource` on the same schema); without it, waiters
   * only poll. The store does not close it.
   */
  readonly completions?: JobCompletionSource;
}

const OPTION_KEYS = ["db", "schema", "controlDb", "maxPayloadBytes", "completions"];
const MAX_MS = 2_147_483_647;
const FINISHED_STATES: readonly string[] = ["succeeded", "dead", "cancelled"];

/**
 * The PostgreSQL `JobStore` and `ScheduleStore`: each method runs one
 * statement from `queries/` (a fenced write after a claim, a batch for the
 * hot paths; `fireDueSchedules`, `runEffectOnce` and `completeInTransaction`
 * one transaction each) and translates database
 * errors through `interpretError` — a lost connection or a serialization
 * failure rejects with `InfrastructureError`.
 *
 * The schema name is validated when the store is constructed, before any SQL
 * runs. The store does not own its pools: whoever created them closes them.
 *
 * @example
 * ```ts
 * const { db } = createDatabase({ connectionString: process.env.DATABASE_URL! });
 * await migrate(db);
 * const store = new PostgresJobStore({ db });
 * await store.enqueue(buildNewJob(SendInvoice, { invoiceId: 812 }));
 * await db.transaction().execute((trx) => store.enqueue(job, trx)); // exists iff trx commits
 * await store.fireDueSchedules({ limit: 100, plan });                 // the same store keeps the schedules
 * ```
 */
export class PostgresJobStore implements JobStore<Kysely<any> | Transaction<any>>, ScheduleStore {
  readonly #db: Kysely<any>;
  readonly #control: Kysely<any>;
  readonly #schema: string;
  readonly #maxPayloadBytes: number;
  readonly #completions: JobCompletionSource | undefined;

  constructor(options: PostgresJobStoreOptions) {
    if (typeof options !== "object" || options === null) throw new ConfigError("store", "options must be an object");
    rejectUnknownOptions("store", options, OPTION_KEYS);
    this.#schema = assertSqlIdentifier(options.schema ?? DEFAULT_SCHEMA, "schema");
    this.#db = assertKysely(options.db, "db");
    this.#control = options.controlDb === undefined ? this.#db : assertKysely(options.controlDb, "controlDb");
    this.#maxPayloadBytes = integerOption("maxPayloadBytes", options.maxPayloadBytes ?? DEFAULT_MAX_PAYLOAD_BYTES, 2, MAX_PAYLOAD_BYTES_LIMIT);
    const { completions } = options;
    if (completions !== undefined && (typeof completions !== "object" || completions === null || typeof completions.watch !== "function")) {
      throw new ConfigError("completions", "must be a JobCompletionSource (such as a PostgresCompletionSource)");
    }
    this.#completions = completions;
  }

  /** The completion hints waiters use, when the store was given them. */
  get completions(): JobCompletionSource | undefined {
    return this.#completions;
  }

  /** The schema this store reads and writes. */
  get schema(): string {
    return this.#schema;
  }

  /** Checks the job like `buildNewJob` (queue name, dedupe key, payload and its size) before any SQL runs. */
  enqueue(job: NewJob, transaction?: Kysely<any> | Transaction<any>): Promise<EnqueueResult> {
    return this.#run("enqueue", () => {
      checkNewJob(job, this.#maxPayloadBytes);
      return enqueue(this.#executor(transaction), this.#schema, job);
    });
  }

  /** Checks every job first; one that fails refuses the whole batch and nothing is inserted. */
  enqueueMany(jobs: readonly NewJob[], transaction?: Kysely<any> | Transaction<any>): Promise<readonly EnqueueResult[]> {
    return this.#run("enqueueMany", () => {
      checkNewJobs(jobs, this.#maxPayloadBytes);
      if (jobs.length === 0) return Promise.resolve(Object.freeze([]));
      return enqueueMany(this.#executor(transaction), this.#schema, jobs);
    });
  }

  claimBatch(params: ClaimBatchParams): Promise<ClaimedBatch> {
    return this.#run("claimBatch", () => {
      if (params.takeOverExpired !== undefined && typeof params.takeOverExpired !== "boolean") {
        throw new ConfigError("takeOverExpired", "must be true or false");
      }
      assertQueueName(params.queue);
      assertStorableKey("workerId", params.workerId, 200);
      integerOption("limit", params.limit, 1, 100_000);
      integerOption("leaseMs", params.leaseMs, 1, MAX_MS);
      const { maxTimeoutMs } = params;
      if (maxTimeoutMs !== undefined) numberOption("maxTimeoutMs", maxTimeoutMs, 0, Number.MAX_SAFE_INTEGER);
      const checked = maxTimeoutMs === undefined ? params : { ...params, maxTimeoutMs: Math.min(Math.floor(maxTimeoutMs), MAX_MS) };
      return claimBatch(this.#db, this.#schema, checked);
    });
  }

  setQueueControls(queue: string, change: QueueControlsChange): Promise<QueueControls> {
    return this.#run("setQueueControls", () => setQueueControls(this.#db, this.#schema, assertQueueName(queue), checkControlsChange(change)));
  }

  listQueueControls(): Promise<readonly QueueControls[]> {
    return this.#run("listQueueControls", () => listQueueControls(this.#db, this.#schema));
  }

  extendLeases(params: ExtendLeasesParams): Promise<readonly string[]> {
    return this.#run("extendLeases", () => {
      integerOption("leaseMs", params.leaseMs, 1, MAX_MS);
      return extendLeases(this.#control, this.#schema, params);
    });
  }

  completeJobs(params: CompleteJobsParams): Promise<readonly string[]> {
    return this.#run("completeJobs", () => completeJobs(this.#control, this.#schema, params));
  }

  scheduleRetries(params: ScheduleRetriesParams): Promise<readonly string[]> {
    return this.#run("scheduleRetries", () => {
      for (const job of params.jobs) integerOption("delayMs", Math.round(job.delayMs), 0, Number.MAX_SAFE_INTEGER);
      return scheduleRetries(this.#control, this.#schema, params);
    });
  }

  markJobsDead(params: MarkJobsDeadParams): Promise<readonly string[]> {
    return this.#run("markJobsDead", () => markJobsDead(this.#control, this.#schema, params));
  }

  rescueExpiredLeases(params: RescueExpiredLeasesParams): Promise<RescueResult> {
    return this.#run("rescueExpiredLeases", () => {
      integerOption("limit", params.limit, 1, 1_000_000);
      return rescueExpiredLeases(this.#db, this.#schema, params);
    });
  }

  claimDeadHooks(params: ClaimDeadHooksParams): Promise<readonly DeadHookClaim[]> {
    return this.#run("claimDeadHooks", () => {
      assertQueueName(params.queue);
      assertStorableKey("workerId", params.workerId, 200);
      integerOption("limit", params.limit, 1, 100_000);
      integerOption("leaseMs", params.leaseMs, 1, MAX_MS);
      return claimDeadHooks(this.#db, this.#schema, params);
    });
  }

  /** On the main pool, like claims (the control pool is kept for leases and outcomes); ids that cannot be jobs' match nothing. */
  finishDeadHooks(params: FinishDeadHooksParams): Promise<readonly string[]> {
    return this.#run("finishDeadHooks", () => finishDeadHooks(this.#db, this.#schema, { ...params, hooks: params.hooks.filter((hook) => isJobId(hook.id)) }));
  }

  cancelJob(params: JobIdParams): Promise<boolean> {
    return this.#run("cancelJob", () => cancelJob(this.#db, this.#schema, params));
  }

  retryJob(params: JobIdParams): Promise<boolean> {
    return this.#run("retryJob", () => retryJob(this.#db, this.#schema, params));
  }

  /** Runs on the control pool, like the outcomes it precedes; refuses progress JSON over `MAX_PROGRESS_BYTES`. */
  writeProgress(params: ProgressWrite): Promise<boolean> {
    return this.#run("writeProgress", () => {
      if (typeof params.progressJson !== "string") throw new ConfigError("progressJson", "must be the progress value as JSON text (see serializeProgress)");
      assertPayloadSize(params.progressJson, MAX_PROGRESS_BYTES);
      assertStorableJson(params.progressJson);
      if (!isJobId(params.job.id)) return Promise.resolve(false);
      return writeProgress(this.#control, this.#schema, params);
    });
  }

  listAttempts(params: ListAttemptsParams): Promise<readonly AttemptRecord[]> {
    return this.#run("listAttempts", () => listAttempts(this.#db, this.#schema, params));
  }

  getJob(params: JobIdParams): Promise<JobRecord | undefined> {
    return this.#run("getJob", () => getJob(this.#db, this.#schema, params));
  }

  countByQueue(params?: CountByQueueParams): Promise<readonly QueueCounts[]> {
    return this.#run("countByQueue", () => countByQueue(this.#db, this.#schema, params));
  }

  readQueueGauges(params?: ReadQueueGaugesParams): Promise<readonly QueueGauges[]> {
    return this.#run("readQueueGauges", () => readQueueGauges(this.#db, this.#schema, params));
  }

  listJobs(params: ListJobsParams): Promise<readonly JobRecord[]> {
    return this.#run("listJobs", () => {
      integerOption("limit", params.limit, 1, 10_000);
      if (params.states !== undefined) checkStates("states", params.states, JOB_STATES);
      if (params.beforeId !== undefined && !isJobId(params.beforeId)) {
        throw new ConfigError("beforeId", `must be a job id (a positive integer as a string), got ${JSON.stringify(params.beforeId)}`);
      }
      return listJobs(this.#db, this.#schema, params);
    });
  }

  deleteFinishedBefore(params: DeleteFinishedBeforeParams): Promise<number> {
    return this.#run("deleteFinishedBefore", () => {
      checkStates("states", params.states, FINISHED_STATES);
      integerOption("olderThanMs", params.olderThanMs, 0, Number.MAX_SAFE_INTEGER);
      integerOption("limit", params.limit, 1, 100_000);
      return deleteFinishedBefore(this.#db, this.#schema, params);
    });
  }

  deleteEffectsBefore(params: DeleteEffectsBeforeParams): Promise<number> {
    return this.#run("deleteEffectsBefore", () => {
      integerOption("olderThanMs", params.olderThanMs, 0, Number.MAX_SAFE_INTEGER);
      integerOption("limit", params.limit, 1, 100_000);
      return deleteEffectsBefore(this.#db, this.#schema, params);
    });
  }

  retryDeadJobs(params: RetryDeadJobsParams): Promise<number> {
    return this.#run("retryDeadJobs", () => {
      assertQueueName(params.queue);
      integerOption("limit", params.limit, 1, 100_000);
      return retryDeadJobs(this.#db, this.#schema, params);
    });
  }

  ping(): Promise<void> {
    return this.#run("ping", () => ping(this.#db));
  }

  /**
   * Runs on the main pool, not the control pool: the effect may take as long
   * as the handler does, and holds its connection until it commits.
   * `effect` gets a Kysely `Transaction`; an error it throws comes back
   * unchanged, after the rollback.
   */
  runEffectOnce(
    params: RunEffectOnceParams,
    effect: (transaction: StoreTransaction) => Promise<unknown>,
  ): Promise<EffectOutcome> {
    return this.#run("runEffectOnce", () => {
      assertStorableKey("key", params.key, 512);
      return runEffectOnce(this.#db, this.#schema, params, effect);
    });
  }

  /**
   * Runs on the main pool, like {@link runEffectOnce}. `work` gets a Kysely
   * `Transaction`; an error it throws comes back unchanged, after the rollback.
   */
  completeInTransaction(
    params: CompleteInTransactionParams,
    work: (transaction: StoreTransaction) => Promise<unknown>,
  ): Promise<TransactionalCompletion> {
    return this.#run("completeInTransaction", () => completeInTransaction(this.#db, this.#schema, params, work));
  }

  syncSchedules(params: SyncSchedulesParams): Promise<void> {
    return this.#run("syncSchedules", () => {
      for (const spec of params.schedules) checkScheduleSpec(spec, this.#maxPayloadBytes);
      return syncSchedules(this.#db, this.#schema, params);
    });
  }

  listSchedules(): Promise<readonly ScheduleRecord[]> {
    return this.#run("listSchedules", () => listSchedules(this.#db, this.#schema));
  }

  fireDueSchedules(params: FireDueSchedulesParams): Promise<readonly ScheduleFire[]> {
    return this.#run("fireDueSchedules", () => {
      integerOption("limit", params.limit, 1, 10_000);
      return fireDueSchedules(this.#db, this.#schema, params);
    });
  }

  #executor(transaction: unknown): Kysely<any> {
    return transaction === undefined || transaction === null ? this.#db : assertKysely(transaction, "transaction");
  }

  async #run<T>(operation: string, query: () => Promise<T>): Promise<T> {
    try {
      return await query();
    } catch (thrown) {
      if (thrown instanceof CallbackFailure) throw thrown.error;
      throw interpretError(thrown, operation);
    }
  }
}

function checkStates(option: string, states: readonly string[], allowed: readonly string[]): void {
  if (!Array.isArray(states) || states.length === 0 || !states.every((state) => allowed.includes(state))) {
    throw new ConfigError(option, `must be a non-empty list of ${allowed.join(", ")}, got ${JSON.stringify(states)}`);
  }
}
