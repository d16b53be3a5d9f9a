import type { JobStore } from "../../store/job-store";
import type { StoreCall, StoreCallArgs, StoreCallResult } from "../../store/job-store-checks";
import { claimBatch } from "./memory-claim";
import { claimDeadHooks, finishDeadHooks } from "./memory-dead-hooks";
import { completeInTransaction, runEffectOnce } from "./memory-effects";
import { enqueueBatch, enqueueOne } from "./memory-enqueue";
import { completeJobs, extendLeases, markJobsDead, scheduleRetries, writeProgress } from "./memory-finalize";
import { listAttempts } from "./memory-history";
import { appendJobLog, listJobLogs, updateJobMeta } from "./memory-job-writes";
import { rescueExpiredLeases } from "./memory-lease-rescue";
import { cancelExpiredJobs, deleteClosedWindows } from "./memory-expiry";
import { cancelJob, cancelJobs, retryDeadJobs, retryJob, runJobNow } from "./memory-operator-calls";
import { releaseLine } from "./memory-groups";
import { listGroups } from "./memory-group-reads";
import { listQueueControls, setQueueControls } from "./memory-queue-controls";
import { countByQueue, getJob, listJobs, readQueueGauges } from "./memory-reads";
import { deleteEffectsBefore, deleteFinishedBefore } from "./memory-retention";
import type { MemoryState } from "./memory-state";
import { addWorkflowSteps, enqueueWorkflow } from "./memory-workflow-enqueue";
import { getWorkflow, listWorkflows, readDependencies, readStepResults } from "./memory-workflow-reads";
import { cancelWorkflow } from "./memory-workflows";
import { givenTransaction, type MemoryTransaction } from "./memory-transaction";

/** Call `K` of the in-memory store, made on its state. */
type MemoryCall<K extends StoreCall> = (state: MemoryState, ...args: StoreCallArgs<K, MemoryTransaction>) => StoreCallResult<K> | Promise<StoreCallResult<K>>;

/** Which function of the in-memory store's files makes each `JobStore` call. */
const MEMORY_CALLS: { readonly [K in StoreCall]: MemoryCall<K> } = Object.freeze({
  enqueue: (state, job, transaction) => enqueueOne(state, job, givenTransaction(transaction)),
  enqueueMany: (state, jobs, transaction) => enqueueBatch(state, jobs, givenTransaction(transaction)),

  claimBatch,
  extendLeases,
  completeJobs,
  scheduleRetries,
  markJobsDead,
  claimDeadHooks,
  finishDeadHooks,
  writeProgress,
  updateJobMeta,
  appendJobLog,
  runEffectOnce,
  completeInTransaction,

  getJob: (state, params) => getJob(state, params.id),
  listJobs,
  listAttempts: (state, params) => listAttempts(state, params.jobId),
  listJobLogs: (state, params) => listJobLogs(state, params.jobId),
  countByQueue,
  readQueueGauges,
  cancelJob: (state, params) => cancelJob(state, params.id),
  cancelJobs,
  retryJob: (state, params) => retryJob(state, params.id),
  runJobNow: (state, params) => runJobNow(state, params.id),
  retryDeadJobs,
  releaseLine,
  listGroups,
  setQueueControls,
  listQueueControls,

  rescueExpiredLeases,
  cancelExpiredJobs,
  deleteClosedWindows,
  deleteFinishedBefore,
  deleteEffectsBefore,
  ping: () => undefined,

  enqueueWorkflow,
  addWorkflowSteps,
  readDependencies,
  readStepResults,
  getWorkflow,
  listWorkflows,
  cancelWorkflow,
});

/**
 * The in-memory `JobStore` on `state`, without argument checks: what an
 * `InMemoryJobStore` hands its `CheckedJobStore` to wrap, and nothing else
 * sees. Each call runs to completion without yielding (atomic as one
 * statement is), and what it throws comes back as a rejection.
 */
export function memoryJobStore(state: MemoryState): JobStore<MemoryTransaction> {
  const store: Partial<Record<StoreCall, (...args: unknown[]) => Promise<unknown>>> = {};
  for (const call of Object.keys(MEMORY_CALLS) as StoreCall[]) {
    const run = MEMORY_CALLS[call] as (state: MemoryState, ...args: unknown[]) => unknown;
    store[call] = async (...args) => run(state, ...args);
  }
  return Object.freeze(store) as JobStore<MemoryTransaction>;
}
