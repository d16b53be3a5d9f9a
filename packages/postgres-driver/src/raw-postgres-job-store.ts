import {
  type AttemptRecord,
  type JobLogRecord,
  type EnqueueResult,
  type JobRecord,
  type JobStore,
  type QueueControls,
  type QueueCounts,
  type QueueGauges,
  type ScheduleRecord,
  type StoreTransaction,
  type UpsertScheduleResult,
  ConfigError,
  type DependencyRecord,
  type WorkflowRecord,
  type WorkflowSummary,
  type ListWorkflowsParams,
} from "@stint/core";
import {
  type CancelJobsParams,
  type ClaimBatchParams,
  type ClaimDeadHooksParams,
  type ClaimedBatch,
  type CompleteInTransactionParams,
  type CompleteJobsParams,
  type CountByQueueParams,
  type DeadHookClaim,
  type DeleteEffectsBeforeParams,
  type DeleteFinishedBeforeParams,
  type EffectOutcome,
  type ExtendedLeases,
  type ExtendLeasesParams,
  type FinishDeadHooksParams,
  type FireDueSchedulesParams,
  type JobCompletionSource,
  type JobIdParams,
  type ListAttemptsParams,
  type ListJobsParams,
  type MarkJobsDeadParams,
  type NewJob,
  type ProgressWrite,
  type MetaUpdate,
  type JobLogAppend,
  type QueueControlsChange,
  type ReadQueueGaugesParams,
  type RescueExpiredLeasesParams,
  type CancelExpiredJobsParams,
  type DeleteClosedWindowsParams,
  type RemoveScheduleParams,
  type RescueResult,
  type RetryDeadJobsParams,
  type LineParams,
  type ListGroupsParams,
  type GroupSummary,
  type RunEffectOnceParams,
  type ScheduleFire,
  type ScheduleRetriesParams,
  type ScheduleStore,
  type SyncSchedulesParams,
  type SyncSchedulesResult,
  type UpsertScheduleParams,
  type TransactionalCompletion,
  MAX_INT4,
  NewWorkflow,
  EnqueuedWorkflowIds,
  AddWorkflowStepsParams,
  type ReadStepResultsParams,
  type StepResult,
} from "@stint/core/driver";
import type { Kysely } from "kysely";
import type { Statements } from "./connection/statement";
import { transactionStatements, type PostgresTransaction } from "./connection/transaction-statements";
import { interpretError } from "./interpret-error";
import { CallbackFailure } from "./queries/callback-failure";
import { cancelJob } from "./queries/cancel-job";
import { cancelJobs } from "./queries/cancel-jobs";
import { claimBatch, type ControlledQueues } from "./queries/claim-batch";
import { HistoryUpkeep } from "./history-upkeep";
import { claimDeadHooks } from "./queries/claim-dead-hooks";
import { completeInTransaction } from "./queries/complete-in-transaction";
import { completeJobs } from "./queries/complete-jobs";
import { countByQueue } from "./queries/count-by-queue";
import { readQueueGauges } from "./queries/read-queue-gauges";
import { deleteEffectsBefore } from "./queries/delete-effects-before";
import { deleteFinishedBefore } from "./queries/delete-finished-before";
import { ensureHistoryPartitions } from "./queries/ensure-history-partitions";
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
import { removeSchedule } from "./queries/remove-schedule";
import { rescueExpiredLeases } from "./queries/rescue-expired-leases";
import { cancelExpiredJobs, deleteClosedWindows } from "./queries/cancel-expired-jobs";
import { retryDeadJobs } from "./queries/retry-dead-jobs";
import { releaseLine } from "./queries/release-line";
import { listGroups } from "./queries/list-groups";
import { enqueueWorkflow } from "./queries/enqueue-workflow";
import { addWorkflowSteps } from "./queries/add-workflow-steps";
import { readDependencies } from "./queries/read-dependencies";
import { readStepResults } from "./queries/read-step-results";
import { getWorkflow, listWorkflows } from "./queries/workflow-reads";
import { cancelWorkflow } from "./queries/cancel-workflow";
import { retryJob } from "./queries/retry-job";
import { runJobNow } from "./queries/run-job-now";
import { runEffectOnce } from "./queries/run-effect-once";
import { scheduleRetries } from "./queries/schedule-retries";
import { syncSchedules } from "./queries/sync-schedules";
import { upsertSchedule } from "./queries/upsert-schedule";
import { writeProgress } from "./queries/write-progress";
import { appendJobLog } from "./queries/append-job-log";
import { listJobLogs } from "./queries/list-job-logs";
import { updateJobMeta } from "./queries/update-job-meta";
import { listQueueControls, setQueueControls } from "./queries/queue-controls";

/** The pools, schema and completion hints a {@link RawPostgresJobStore} works with, already checked. */
export interface RawPostgresJobStoreParts {
  readonly db: Kysely<any>;
  /** Where the hot statements of `db` run: its pool's `StatementRunner`, or `db` itself. */
  readonly statements: Statements;
  /** Where the hot statements of the control pool run (lease extensions and outcomes). */
  readonly controlStatements: Statements;
  readonly schema: string;
  readonly completions: JobCompletionSource | undefined;
}

/**
 * The PostgreSQL `JobStore` and `ScheduleStore` without argument checks:
 * each method runs one statement from `queries/` (a fenced write after a
 * claim, a batch for the hot paths; `fireDueSchedules`, `runEffectOnce` and
 * `completeInTransaction` one transaction each) and translates database
 * errors through `interpretError`. It judges only what PostgreSQL alone
 * can: whether a transaction is one it can write in, whether an id can be a job's.
 * Every other argument is checked by `CheckedJobStore` and
 * `CheckedScheduleStore`, which `PostgresJobStore` puts in front of it;
 * nothing hands this class out bare.
 */
export class RawPostgresJobStore implements JobStore<PostgresTransaction>, ScheduleStore {
  readonly #db: Kysely<any>;
  readonly #statements: Statements;
  readonly #controlStatements: Statements;
  readonly #schema: string;
  readonly #completions: JobCompletionSource | undefined;
  /** The queues whose last claim found controls on them: their next claim is sent with the controls at once. */
  readonly #controlledQueues: ControlledQueues = new Map();
  readonly #historyUpkeep: HistoryUpkeep;

  constructor(parts: RawPostgresJobStoreParts) {
    this.#db = parts.db;
    this.#statements = parts.statements;
    this.#controlStatements = parts.controlStatements;
    this.#schema = parts.schema;
    this.#completions = parts.completions;
    this.#historyUpkeep = new HistoryUpkeep(() => ensureHistoryPartitions(parts.db, parts.schema));
  }

  /** The completion hints waiters use, when the store was given them. */
  get completions(): JobCompletionSource | undefined {
    return this.#completions;
  }

  /** The schema this store reads and writes. */
  get schema(): string {
    return this.#schema;
  }

  enqueue(job: NewJob, transaction?: PostgresTransaction): Promise<EnqueueResult> {
    return this.#run("enqueue", () => enqueue(this.#statementsFor(transaction), this.#schema, job));
  }

  enqueueMany(jobs: readonly NewJob[], transaction?: PostgresTransaction): Promise<readonly EnqueueResult[]> {
    return this.#run("enqueueMany", () => enqueueMany(this.#statementsFor(transaction), this.#schema, jobs));
  }

  /** Reads `maxTimeoutMs` as whole milliseconds, at most what `timeout_ms` holds. */
  claimBatch(params: ClaimBatchParams): Promise<ClaimedBatch> {
    const { maxTimeoutMs } = params;
    const whole = maxTimeoutMs === undefined ? params : { ...params, maxTimeoutMs: Math.min(Math.floor(maxTimeoutMs), MAX_INT4) };
    this.#historyUpkeep.onClaim();
    return this.#run("claimBatch", () => claimBatch(this.#statements, this.#schema, whole, this.#controlledQueues));
  }

  setQueueControls(queue: string, change: QueueControlsChange): Promise<QueueControls> {
    return this.#run("setQueueControls", () => setQueueControls(this.#db, this.#schema, queue, change));
  }

  listQueueControls(): Promise<readonly QueueControls[]> {
    return this.#run("listQueueControls", () => listQueueControls(this.#db, this.#schema));
  }

  extendLeases(params: ExtendLeasesParams): Promise<ExtendedLeases> {
    return this.#run("extendLeases", () => extendLeases(this.#controlStatements, this.#schema, params));
  }

  completeJobs(params: CompleteJobsParams): Promise<readonly string[]> {
    return this.#run("completeJobs", () => completeJobs(this.#controlStatements, this.#schema, params));
  }

  scheduleRetries(params: ScheduleRetriesParams): Promise<readonly string[]> {
    return this.#run("scheduleRetries", () => scheduleRetries(this.#controlStatements, this.#schema, params));
  }

  markJobsDead(params: MarkJobsDeadParams): Promise<readonly string[]> {
    return this.#run("markJobsDead", () => markJobsDead(this.#controlStatements, this.#schema, params));
  }

  rescueExpiredLeases(params: RescueExpiredLeasesParams): Promise<RescueResult> {
    return this.#run("rescueExpiredLeases", () => rescueExpiredLeases(this.#db, this.#schema, params));
  }

  cancelExpiredJobs(params: CancelExpiredJobsParams): Promise<number> {
    return this.#run("cancelExpiredJobs", () => cancelExpiredJobs(this.#db, this.#schema, params));
  }

  deleteClosedWindows(params: DeleteClosedWindowsParams): Promise<number> {
    return this.#run("deleteClosedWindows", () => deleteClosedWindows(this.#db, this.#schema, params));
  }

  claimDeadHooks(params: ClaimDeadHooksParams): Promise<readonly DeadHookClaim[]> {
    return this.#run("claimDeadHooks", () => claimDeadHooks(this.#db, this.#schema, params));
  }

  /** On the main pool, like claims (the control pool is kept for leases and outcomes); ids that cannot be jobs' match nothing. */
  finishDeadHooks(params: FinishDeadHooksParams): Promise<readonly string[]> {
    return this.#run("finishDeadHooks", () => finishDeadHooks(this.#db, this.#schema, { ...params, hooks: params.hooks.filter((hook) => isJobId(hook.id)) }));
  }

  cancelJob(params: JobIdParams): Promise<boolean> {
    return this.#run("cancelJob", () => cancelJob(this.#db, this.#schema, params));
  }

  cancelJobs(params: CancelJobsParams): Promise<number> {
    return this.#run("cancelJobs", () => cancelJobs(this.#db, this.#schema, params));
  }

  retryJob(params: JobIdParams): Promise<boolean> {
    return this.#run("retryJob", () => retryJob(this.#db, this.#schema, params));
  }

  runJobNow(params: JobIdParams): Promise<boolean> {
    return this.#run("runJobNow", () => runJobNow(this.#db, this.#schema, params));
  }

  /** Runs on the control pool, like the outcomes it precedes; an id that cannot be a job's matches nothing. */
  writeProgress(params: ProgressWrite): Promise<boolean> {
    if (!isJobId(params.job.id)) return Promise.resolve(false);
    return this.#run("writeProgress", () => writeProgress(this.#controlStatements, this.#schema, params));
  }

  /** Locks the job's row, merges and checks the size, and writes it, in one transaction; an id that cannot be a job's matches nothing. */
  updateJobMeta(params: MetaUpdate): Promise<boolean> {
    if (!isJobId(params.job.id)) return Promise.resolve(false);
    return this.#run("updateJobMeta", () => updateJobMeta(this.#db, this.#schema, params));
  }

  /** Runs on the control pool, like the outcomes it precedes; an id that cannot be a job's matches nothing. */
  appendJobLog(params: JobLogAppend): Promise<boolean> {
    if (!isJobId(params.job.id)) return Promise.resolve(false);
    return this.#run("appendJobLog", () => appendJobLog(this.#controlStatements, this.#schema, params));
  }

  listJobLogs(params: ListAttemptsParams): Promise<readonly JobLogRecord[]> {
    return this.#run("listJobLogs", () => listJobLogs(this.#db, this.#schema, params));
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

  /** Pages by id: a `beforeId` must be a job id of this store, a positive integer as a string. */
  listJobs(params: ListJobsParams): Promise<readonly JobRecord[]> {
    if (params.beforeId !== undefined && !isJobId(params.beforeId)) {
      return Promise.reject(new ConfigError("beforeId", `must be a job id (a positive integer as a string), got ${JSON.stringify(params.beforeId)}`));
    }
    return this.#run("listJobs", () => listJobs(this.#db, this.#schema, params));
  }

  deleteFinishedBefore(params: DeleteFinishedBeforeParams): Promise<number> {
    return this.#run("deleteFinishedBefore", () => deleteFinishedBefore(this.#db, this.#schema, params));
  }

  /** Keeps the day partitions of `finished_jobs` ready a week ahead; returns how many it created. */
  ensureHistoryPartitions(): Promise<number> {
    return this.#run("ensureHistoryPartitions", () => ensureHistoryPartitions(this.#db, this.#schema));
  }

  deleteEffectsBefore(params: DeleteEffectsBeforeParams): Promise<number> {
    return this.#run("deleteEffectsBefore", () => deleteEffectsBefore(this.#db, this.#schema, params));
  }

  retryDeadJobs(params: RetryDeadJobsParams): Promise<number> {
    return this.#run("retryDeadJobs", () => retryDeadJobs(this.#db, this.#schema, params));
  }

  releaseLine(params: LineParams): Promise<boolean> {
    return this.#run("releaseLine", () => releaseLine(this.#db, this.#schema, params));
  }

  listGroups(params: ListGroupsParams): Promise<readonly GroupSummary[]> {
    return this.#run("listGroups", () => listGroups(this.#db, this.#schema, params));
  }

  enqueueWorkflow(workflow: NewWorkflow, transaction?: PostgresTransaction): Promise<EnqueuedWorkflowIds> {
    return this.#run("enqueueWorkflow", () => enqueueWorkflow(this.#statementsFor(transaction), this.#schema, workflow));
  }

  /** `transaction` is the Kysely `Transaction` that `completeInTransaction` hands its work. */
  addWorkflowSteps(params: AddWorkflowStepsParams, transaction: StoreTransaction): Promise<readonly string[] | undefined> {
    return this.#run("addWorkflowSteps", () => addWorkflowSteps(transactionStatements(transaction, "transaction"), this.#schema, params));
  }

  readDependencies(params: { readonly jobId: string }): Promise<readonly DependencyRecord[]> {
    return this.#run("readDependencies", () => readDependencies(this.#db, this.#schema, params));
  }

  readStepResults(params: ReadStepResultsParams): Promise<readonly StepResult[]> {
    return this.#run("readStepResults", () => readStepResults(this.#db, this.#schema, params));
  }

  getWorkflow(params: { readonly id: string }): Promise<WorkflowRecord | undefined> {
    return this.#run("getWorkflow", () => getWorkflow(this.#db, this.#schema, params));
  }

  listWorkflows(params: ListWorkflowsParams): Promise<readonly WorkflowSummary[]> {
    return this.#run("listWorkflows", () => listWorkflows(this.#db, this.#schema, params));
  }

  cancelWorkflow(params: { readonly id: string }): Promise<number | undefined> {
    return this.#run("cancelWorkflow", () => cancelWorkflow(this.#db, this.#schema, params));
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
  runEffectOnce(params: RunEffectOnceParams, effect: (transaction: StoreTransaction) => Promise<unknown>): Promise<EffectOutcome> {
    return this.#run("runEffectOnce", () => runEffectOnce(this.#db, this.#schema, params, effect));
  }

  /**
   * Runs on the main pool, like {@link runEffectOnce}. `work` gets a Kysely
   * `Transaction`; an error it throws comes back unchanged, after the rollback.
   */
  completeInTransaction(params: CompleteInTransactionParams, work: (transaction: StoreTransaction) => Promise<unknown>): Promise<TransactionalCompletion> {
    return this.#run("completeInTransaction", () => completeInTransaction(this.#db, this.#schema, params, work));
  }

  syncSchedules(params: SyncSchedulesParams): Promise<SyncSchedulesResult> {
    return this.#run("syncSchedules", () => syncSchedules(this.#db, this.#schema, params));
  }

  upsertSchedule(params: UpsertScheduleParams): Promise<UpsertScheduleResult> {
    return this.#run("upsertSchedule", () => upsertSchedule(this.#db, this.#schema, params));
  }

  removeSchedule(params: RemoveScheduleParams): Promise<ScheduleRecord | undefined> {
    return this.#run("removeSchedule", () => removeSchedule(this.#db, this.#schema, params));
  }

  listSchedules(): Promise<readonly ScheduleRecord[]> {
    return this.#run("listSchedules", () => listSchedules(this.#db, this.#schema));
  }

  fireDueSchedules(params: FireDueSchedulesParams): Promise<readonly ScheduleFire[]> {
    return this.#run("fireDueSchedules", () => fireDueSchedules(this.#db, this.#schema, params));
  }

  /** The store's own statement runner, or the caller's transaction: Kysely, pg, Drizzle or knex (see `transactionStatements`). */
  #statementsFor(transaction: unknown): Statements {
    return transaction === undefined || transaction === null ? this.#statements : transactionStatements(transaction, "transaction");
  }

  async #run<T>(operation: string, query: () => Promise<T>): Promise<T> {
    try {
      return await query();
    } catch (thrown) {
      if (thrown instanceof CallbackFailure) throw thrown.error;
      throw interpretError(thrown, operation, { schema: this.#schema });
    }
  }
}
