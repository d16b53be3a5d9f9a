/**
 * `@stint/core/driver`: what a store implementer imports — the service
 * provider interface behind `JobStore`. The parameter and row shapes of
 * every store call, the checked-store wrapper that validates them once,
 * the schedule store, wake-ups, leader lock and completion hints a driver
 * registers, the builders that turn an application's input into rows, the
 * limits of stored columns, and the option checks a driver's own options
 * use.
 *
 * `JobStore` itself, the records it returns and the errors it rejects with
 * are in `@stint/core`: an implementation imports from both. Applications
 * need only `@stint/core`.
 *
 * @example
 * ```ts
 * import type { JobStore, JobRecord } from "@stint/core";
 * import { checkedJobStore, type ClaimBatchParams, type ClaimedBatch } from "@stint/core/driver";
 *
 * class MyStore implements JobStore {
 *   async claimBatch(params: ClaimBatchParams): Promise<ClaimedBatch> { … } // params already checked
 * }
 * container.registerInstance(JOB_STORE, checkedJobStore(new MyStore()));
 * ```
 *
 * @packageDocumentation
 */
// tsyringe reads decorator metadata, so the polyfill loads before anything else.
import "reflect-metadata";

export { CheckedJobStore, checkedJobStore } from "./store/checked-job-store";
export type { CheckedJobStoreOptions } from "./store/checked-job-store";
export { CheckedScheduleStore, checkedScheduleStore } from "./store/checked-schedule-store";

export type { NewJob, JobAttempt, CompletedJob, RetryingJob, DeadJob, JobFailure, ProgressWrite, MetaUpdate, JobLogAppend } from "./store/job-store";
// Every call's parameters, and what the calls with a shape of their own answer.
export type * from "./store/store-params";
export type { NewWorkflow, NewWorkflowStep, EnqueuedWorkflowIds, AddWorkflowStepsParams, ReadStepResultsParams, StepResult } from "./store/workflow-store";
export type { ClaimedBatch, ClaimHold, QueueControlsChange } from "./queue/queue-controls";
export type { DeadHookClaim } from "./store/dead-hook-claim";
export type { JobCompletionSource, JobWatch } from "./store/job-completion-source";
export type {
  ScheduleStore,
  ScheduleSpec,
  SchedulePlan,
  ScheduleFire,
  FirstRunAt,
  SyncSchedulesParams,
  SyncSchedulesResult,
  UpsertScheduleParams,
  RemoveScheduleParams,
  FireDueSchedulesParams,
} from "./store/schedule-store";
export type { WakeupSource, WakeupListener, CancelledAttempt, LeaderLock } from "./runtime/coordination";
export type { MaintenanceService } from "./maintenance/maintenance-service";
export { SCHEDULE_STORE, WAKEUP_SOURCE, LEADER_LOCK } from "./di/tokens";
// What a `JobEventSource` implementation checks a subscription with and filters its events by.
export { checkJobEventSubscription, matchesJobEventFilter, gapConcerns } from "./events/job-events";

export { buildNewJob } from "./job/enqueue-options";
export { assertPayloadFitsSchema } from "./job/payload-schema";
export { serializePayload, serializeResult } from "./job/serialize-payload";
export { serializeProgress } from "./job/progress-value";
export { keepNewestLogLines, parseLogLine, serializeLogLine } from "./job/job-log";
export { mergeMetaPatch } from "./job/meta-patch";
export { planFires, firstRunAt } from "./schedule/cron-plan";
export { scheduleDedupeKey, scheduleFireJob } from "./schedule/schedule-fire-job";
export { checkScheduleGrace, declarationIntervalMs } from "./schedule/schedule-grace";
export { LATEST_DATE_MS } from "./time/time-bounds";

export { LeaseRescuer } from "./maintenance/lease-rescuer";
export { BoundedSweep, type BoundedSweepOptions } from "./maintenance/bounded-sweep";
export { JobExpirer } from "./maintenance/job-expirer";
export { ScheduleTicker } from "./maintenance/schedule-ticker";
export type { ScheduleTickerOptions } from "./maintenance/schedule-ticker";
export { ScheduleDeclarer } from "./maintenance/schedule-declarer";
export type { ScheduleDeclarerOptions } from "./maintenance/schedule-declarer";
export { RetentionPruner } from "./maintenance/retention-pruner";

export { assertSqlIdentifier, assertQueueName, assertStorableKey } from "./validation/names";
export { integerOption, rejectUnknownOptions } from "./validation/option-checks";
export {
  MAX_INT4,
  MAX_BATCH_SIZE,
  MAX_EXPIRE_BATCH,
  MAX_PAGE_SIZE,
  MAX_ERROR_TEXT,
  MAX_ERROR_MESSAGE,
  MAX_GROUPS_LISTED,
  GROUP_WAITING_COUNT_CAP,
  MAX_GROUP_KEY_LENGTH,
  MAX_WORKFLOW_STEPS,
  MAX_STEP_DEPENDENCIES,
  MAX_WORKFLOW_DEPENDENCIES,
} from "./limits";
