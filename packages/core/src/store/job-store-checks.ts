import { checkControlsChange } from "../queue/check-controls-change";
import { assertStoredQueueName } from "../validation/names";
import { checkNewJob, checkNewJobs } from "./check-new-job";
import * as check from "./check-store-params";
import * as workflows from "./check-workflow-params";
import type { EnqueueResult, JobStore } from "./job-store";

// The one table of what CheckedJobStore checks before each JobStore call
// reaches the store: the wrapper is generated from it, so a call added to
// JobStore without a row here does not compile.

/** The calls of a `JobStore`: every member but its `completions` hints. */
export type StoreCall = Exclude<keyof JobStore, "completions">;

/** What call `K` of a `JobStore<Tx>` takes. */
export type StoreCallArgs<K extends StoreCall, Tx = unknown> = Parameters<JobStore<Tx>[K]>;

/** What call `K` of a `JobStore` resolves with. */
export type StoreCallResult<K extends StoreCall> = Awaited<ReturnType<JobStore[K]>>;

/** The limits a check reads from the wrapper that runs it (its `this`). */
export interface CheckLimits {
  readonly maxPayloadBytes: number;
}

/**
 * What a check settles besides a refusal (which it throws): nothing, to
 * hand the store the arguments as they are; `forward`, to hand it a checked
 * copy instead; or `answer`, to resolve the call without the store.
 */
// eslint-disable-next-line @typescript-eslint/no-invalid-void-type -- a check that returns nothing (any void function) forwards the arguments
export type CheckVerdict<K extends StoreCall> = void | { readonly forward: StoreCallArgs<K> } | { readonly answer: StoreCallResult<K> };

/** The check of call `K`, run with the call's arguments and the wrapper's limits as `this`. */
export type CallCheck<K extends StoreCall> = (this: CheckLimits, ...args: StoreCallArgs<K>) => CheckVerdict<K>;

const NO_RESULTS: { readonly answer: readonly EnqueueResult[] } = Object.freeze({ answer: Object.freeze([]) });

/** Each call's check (`null`: a call without arguments to check), in the order of `JobStore`'s groups. */
export const JOB_STORE_CHECKS: { readonly [K in StoreCall]: CallCheck<K> | null } = Object.freeze({
  enqueue(job) {
    checkNewJob(job, this.maxPayloadBytes);
  },
  /** Every job first: one that fails refuses the whole batch. An empty batch resolves at once, without the store. */
  enqueueMany(jobs) {
    checkNewJobs(jobs, this.maxPayloadBytes);
    return jobs.length === 0 ? NO_RESULTS : undefined;
  },

  claimBatch: check.checkClaimBatch,
  extendLeases: check.checkExtendLeases,
  completeJobs: check.checkCompleteJobs,
  scheduleRetries: check.checkScheduleRetries,
  markJobsDead: check.checkMarkJobsDead,
  claimDeadHooks: check.checkClaimDeadHooks,
  finishDeadHooks: check.checkFinishDeadHooks,
  writeProgress: check.checkProgressWrite,
  updateJobMeta: check.checkMetaUpdate,
  appendJobLog: check.checkJobLogAppend,
  runEffectOnce: check.checkRunEffectOnce,
  completeInTransaction: check.checkCompleteInTransaction,

  getJob: check.checkJobIdParams,
  listJobs: check.checkListJobs,
  listAttempts: check.checkListAttempts,
  listJobLogs: check.checkListAttempts,
  countByQueue: check.checkCountByQueue,
  readQueueGauges: check.checkReadQueueGauges,
  cancelJob: check.checkJobIdParams,
  cancelJobs: check.checkCancelJobs,
  retryJob: check.checkJobIdParams,
  runJobNow: check.checkJobIdParams,
  retryDeadJobs: check.checkRetryDeadJobs,
  releaseLine: check.checkLineParams,
  listGroups: check.checkListGroups,
  /** Hands the store the change as `checkControlsChange` returns it: checked, frozen, with nothing but its three fields. */
  setQueueControls(queue, change) {
    // A name that breaks the rule reaches the store, which only updates a queues row that already holds it.
    assertStoredQueueName(queue);
    return { forward: [queue, checkControlsChange(change)] };
  },
  listQueueControls: null,

  rescueExpiredLeases: check.checkRescueExpiredLeases,
  cancelExpiredJobs: check.checkCancelExpiredJobs,
  deleteClosedWindows: check.checkDeleteClosedWindows,
  deleteFinishedBefore: check.checkDeleteFinishedBefore,
  deleteEffectsBefore: check.checkDeleteEffectsBefore,
  ping: null,

  enqueueWorkflow(workflow) {
    workflows.checkNewWorkflow(workflow, this.maxPayloadBytes);
  },
  addWorkflowSteps(params) {
    workflows.checkAddWorkflowSteps(params, this.maxPayloadBytes);
  },
  readDependencies: workflows.checkReadDependencies,
  readStepResults: workflows.checkReadStepResults,
  getWorkflow: workflows.checkWorkflowIdParams,
  listWorkflows: workflows.checkListWorkflows,
  cancelWorkflow: workflows.checkWorkflowIdParams,
});
