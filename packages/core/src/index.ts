/**
 * `@stint/core`: what an application imports to define job kinds, enqueue
 * and wait for jobs, write and run workers, schedule, observe and operate
 * queues, and tell errors apart by their codes.
 *
 * Writing a store (a `JobStore` for another database) or testing one? The
 * parameter shapes of the store's calls, the checked-store wrapper and the
 * other service-provider types are in `@stint/core/driver`. Every name is
 * in one of the two; a store implementation imports from both. (Helpers
 * only stint's own packages share are in `@stint/core/internal`, which is
 * not public API and may change in any release.)
 *
 * @packageDocumentation
 */
// tsyringe reads decorator metadata, so the polyfill loads before anything else.
import "reflect-metadata";

export { ErrorCode } from "./errors/error-codes";
export { StintError, hasErrorCode, errorCodeOf } from "./errors/stint-error";
export {
  PermanentError,
  RetryableError,
  SnoozeError,
  ParseError,
  JobTimeoutError,
  LeaseLostError,
  CancelledError,
  ShutdownError,
  RecordedError,
} from "./errors/job-errors";
export { ConfigError, PayloadError, PayloadSchemaError, InvalidNameError } from "./errors/config-errors";
export { EnvironmentError } from "./errors/environment-error";
export { InfrastructureError, DatabaseError } from "./errors/infrastructure-error";
export { SchemaMissingError, MissingPasswordError } from "./errors/database-setup-errors";
export { permanent, retryAfter, snooze } from "./errors/control-flow";
export { JobFailedError, WaitTimeoutError, JobNotFoundError } from "./errors/wait-errors";
export { ScheduleConflictError } from "./errors/schedule-errors";

export {
  DEFAULT_MAX_PAYLOAD_BYTES,
  MAX_PAYLOAD_BYTES_LIMIT,
  MAX_PAYLOAD_DEPTH,
  MAX_META_BYTES,
  MAX_PROGRESS_BYTES,
  MAX_JOB_LOG_LINES,
  MAX_JOB_LOG_BYTES,
  MAX_LOG_MESSAGE_LENGTH,
  MAX_LOG_FIELDS_BYTES,
  MAX_DEDUPE_KEY_LENGTH,
  MAX_EFFECT_KEY_LENGTH,
  MAX_QUEUE_NAME_LENGTH,
  MIN_PRIORITY,
  MAX_PRIORITY,
  MAX_ATTEMPTS,
  MAX_TIMEOUT_MS,
} from "./limits";

export type { JobState } from "./job/job-state";
export { JOB_STATES, ACTIVE_JOB_STATES, FINISHED_JOB_STATES } from "./job/job-state";
export type { ClaimedJob, JobRecord } from "./job/job-record";
export type { JobDefinition, JobDefaults, JobKindOptions, SchemaJobDefinition, SchemaJobKindOptions, PayloadOf, ResultOf, ItemOf } from "./job/job-definition";
export type { PayloadSchema } from "./job/payload-schema";
export type { PayloadIssue } from "./job/payload-issues";
export { defineJob } from "./job/job-definition";
export type { DeadLetterOrigin } from "./job/dead-letter";
export type { EnqueueOptions, DedupeMode } from "./job/enqueue-options";
export type { JsonValue, JsonObject } from "./job/json-types";
export { redact, redactText, redactingLogger } from "./job/secret-fields";

export type { JobStore, EnqueueResult, UniqueWindow, SerialOnDead, StoreTransaction, QueueCounts, QueueGauges } from "./store/job-store";
export type { ProducerStore } from "./store/producer-store";
export type { WorkerStore } from "./store/worker-store";
export type { OperatorStore } from "./store/operator-store";
export type { MaintenanceStore } from "./store/maintenance-store";
export type { AttemptRecord, AttemptOutcomeName, AttemptError } from "./store/attempt-record";
export type { JobLogLine, JobLogRecord } from "./job/job-log";
export type { QueueControls, QueueRetention, QueueRetentionChange, RateLimit } from "./queue/queue-controls";
export { QueueAdmin } from "./client/queue-admin";
export type { QueueRef, QueueLimits, CancelWaitingOptions, CancelWaitingResult } from "./client/queue-admin";

export type { Clock } from "./time/clock";
export type { Logger, LogFields } from "./logging/logger";
export type { LoggerOptions, LogStream } from "./logging/create-logger";
export type { LogLevel, LogFormat, LogSettings, Environment } from "./logging/log-settings";
export { LOG_LEVELS, LOG_FORMATS, readLogSettings } from "./logging/log-settings";
export { createLogger, createSilentLogger } from "./logging/create-logger";
export type { BackoffOptions } from "./policy/backoff";

export { JobClient } from "./client/job-client";
export type { BatchItem, EnqueuedJob, EnqueuedWorkflow, EnqueuedStep, WorkflowResults, WorkflowRef } from "./client/job-client";
export type { ListWorkflowsParams } from "./store/workflow-store";
export { step } from "./workflow/workflow-step";
export type { StepOptions, WorkflowStep, WorkflowSteps, StepResultOf } from "./workflow/workflow-step";
export type { StepDependencies, DependencyRecord } from "./workflow/step-dependencies";
export type { WorkflowState, WorkflowSummary, WorkflowRecord, WorkflowStepRecord } from "./workflow/workflow-record";
export { WorkflowDefinitionError, WorkflowFailedError, WorkflowNotFoundError } from "./workflow/workflow-errors";
export type { WorkflowStore } from "./store/workflow-store";
export type { WaitOptions } from "./client/await-job";
export type { EventHub, EventListener } from "./events/event-hub";
export { WorkerEvents } from "./events/worker-events";
export type {
  WorkerEventMap,
  WorkerEventName,
  JobEventBase,
  JobStartedEvent,
  JobSucceededEvent,
  JobFailedEvent,
  JobDeadEvent,
  JobSnoozedEvent,
  JobReleasedEvent,
  JobLeaseLostEvent,
  JobCancelledEvent,
  JobWriteFailedEvent,
  JobProgressEvent,
  JobOnDeadFailedEvent,
  WorkerEventBase,
  WorkerStartedEvent,
  QueueDrainedEvent,
  WorkerStoppedEvent,
} from "./events/worker-events";
export { ClientEvents } from "./events/client-events";
export { JOB_EVENTS, JOB_EVENT_TYPES, InMemoryJobEvents } from "./events/job-events";
export type {
  JobEvent,
  JobEventType,
  JobEventFields,
  JobEnqueuedChange,
  JobStartedChange,
  JobProgressChange,
  JobSucceededChange,
  JobFailedChange,
  JobRequeuedChange,
  JobRequeueReason,
  JobDeadChange,
  JobCancelledChange,
  JobLogChange,
  JobEventGap,
  JobEventFilter,
  JobEventHandlers,
  JobEventSubscription,
  JobEventSource,
} from "./events/job-events";
export type { ClientEventMap, JobEnqueuedEvent } from "./events/client-events";
export { JOB_STORE, LOGGER } from "./di/tokens";

export { AbstractQueueWorker } from "./worker/abstract-queue-worker";
export { SchemaQueueWorker } from "./worker/schema-queue-worker";
export type { WorkerOptions, ResolvedWorkerOptions } from "./worker/worker-options";
export type { RunOptions } from "./worker/run-options";
export { DrainGroup } from "./worker/drain-group";
export type { DrainGroupMember, DrainVerdict } from "./worker/drain-group";
export type { RunSummary, RunTotals, StopReason } from "./worker/run-summary";
export type { JobContext, JobLog, FailureDecision } from "./worker/job-context";
export type { BatchContext, BatchEntry } from "./worker/batch-context";
export type { DeadJobContext } from "./worker/dead-job-context";
export type { WorkerClass, AnyQueueWorker, InjectTokens, CheckedWorkerClass } from "./di/worker-class";
export { registerLogger, registerWorkers, resolveWorkers, resolveWorker, registerSchedules } from "./di/register-core";

export type { ScheduleOptions, ScheduleDefinition } from "./schedule/define-schedule";
export { defineSchedule } from "./schedule/define-schedule";
export type { ScheduleRecord, ScheduleOrigin, UpsertScheduleResult } from "./store/schedule-store";
export { ScheduleClient } from "./client/schedule-client";

export type { RetentionOptions } from "./maintenance/retention-pruner";
export { ExitCode } from "./runtime/exit-codes";
export type { RunReport } from "./runtime/run-report";
export { summarizeRun } from "./runtime/run-report";
export type { RunWorkersOptions, RunOverrides } from "./runtime/run-workers";
export { runWorkers } from "./runtime/run-workers";
export type { RunFromContainerOptions } from "./runtime/run-from-container";
export type { SettingFlags } from "./settings/resolve-run-settings";
export type { TunableSettings, TunableSetting } from "./settings/setting-specs";
export type { MetricsOptions } from "./metrics/run-metrics";
export { runFromContainer } from "./runtime/run-from-container";
export { handleStopSignals } from "./runtime/stop-signals";
