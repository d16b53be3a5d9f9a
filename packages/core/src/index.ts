// Public API of @stint/core. Everything a user imports is re-exported here, explicitly.
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
  ShutdownError,
  RecordedError,
} from "./errors/job-errors";
export { ConfigError, PayloadError, PayloadSchemaError, InvalidNameError } from "./errors/config-errors";
export { EnvironmentError } from "./errors/environment-error";
export { InfrastructureError, DatabaseError } from "./errors/infrastructure-error";
export { coerceError, describeError, errorSummary } from "./errors/coerce-error";
export { MAX_QUEUE_NAME_LENGTH, MAX_EFFECT_KEY_LENGTH, MAX_INT4, MAX_TIMER_MS, MIN_PRIORITY, MAX_PRIORITY, MAX_ATTEMPTS, MAX_TIMEOUT_MS, MAX_BATCH_SIZE, MAX_PAGE_SIZE, MAX_ERROR_TEXT, MAX_ERROR_MESSAGE, DEFAULT_MAX_PAYLOAD_BYTES, MAX_PAYLOAD_BYTES_LIMIT, MAX_DEDUPE_KEY_LENGTH, MAX_PAYLOAD_DEPTH, MAX_META_BYTES, MAX_PROGRESS_BYTES, MAX_RATE_LIMIT, MAX_RATE_PERIOD_MS, MAX_RUNNING_CAP } from "./limits";
export { permanent, retryAfter, snooze } from "./errors/control-flow";
export { JobFailedError, WaitTimeoutError, JobNotFoundError } from "./errors/wait-errors";

export type { JobState } from "./job/job-state";
export { JOB_STATES, ACTIVE_JOB_STATES } from "./job/job-state";
export type { ClaimedJob, JobRecord } from "./job/job-record";
export type {
  JobDefinition,
  JobDefaults,
  JobKindOptions,
  SchemaJobDefinition,
  SchemaJobKindOptions,
  PayloadOf,
  ResultOf,
  ItemOf,
} from "./job/job-definition";
export type { PayloadSchema } from "./job/payload-schema";
export type { PayloadIssue } from "./job/payload-issues";
export { defineJob, DEFAULT_JOB_DEFAULTS } from "./job/job-definition";
export type { EnqueueOptions, DedupeMode } from "./job/enqueue-options";
export { buildNewJob } from "./job/enqueue-options";
export {
  serializePayload,
  serializeResult,
  assertPayloadSize,
  assertStorableJson,
} from "./job/serialize-payload";
export { assertJsonValue } from "./job/json-value-check";
export type { JsonValue, JsonObject } from "./job/json-types";
export { serializeMeta, assertStorableMeta, EMPTY_META } from "./job/job-meta";
export { serializeProgress } from "./job/progress-value";
export { redact, redactText, redactingLogger, secretValuesOf, REDACTED } from "./job/secret-fields";

export type {
  JobStore,
  NewJob,
  EnqueueResult,
  JobAttempt,
  CompletedJob,
  RetryingJob,
  DeadJob,
  JobFailure,
  ProgressWrite,
  QueueCounts,
  QueueGauges,
  StoreTransaction,
} from "./store/job-store";
export type { AttemptRecord, AttemptOutcomeName, AttemptError } from "./store/attempt-record";
export { CheckedJobStore, checkedJobStore } from "./store/checked-job-store";
export type { CheckedJobStoreOptions } from "./store/checked-job-store";
export { CheckedScheduleStore } from "./store/checked-schedule-store";
export type {
  ClaimBatchParams,
  ClaimDeadHooksParams,
  CompleteInTransactionParams,
  CompleteJobsParams,
  CountByQueueParams,
  DeleteEffectsBeforeParams,
  DeleteFinishedBeforeParams,
  EffectOutcome,
  ExtendLeasesParams,
  FinishDeadHooksParams,
  FinishedState,
  WorkerBatch,
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
} from "./store/store-params";
export type { JobCompletionSource, JobWatch } from "./store/job-completion-source";
export type { DeadHookClaim } from "./store/dead-hook-claim";
export type { QueueControls, QueueControlsChange, RateLimit, ClaimHold, ClaimedBatch } from "./queue/queue-controls";
export { parseRateLimit, formatRateLimit, checkRateLimit } from "./queue/rate-limit-text";
export { checkControlsChange } from "./queue/check-controls-change";
export { QueueAdmin } from "./client/queue-admin";
export type { QueueRef, QueueLimits } from "./client/queue-admin";

export { assertSqlIdentifier, assertQueueName, assertScheduleName, assertStorableKey } from "./validation/names";
export { integerOption, numberOption, rejectUnknownOptions } from "./validation/option-checks";
export type { Clock } from "./time/clock";
export { systemClock } from "./time/clock";
export { LATEST_DATE_MS, infiniteTimeName } from "./time/time-bounds";
export { seededRandom } from "./time/seeded-random";
export { parseDuration, formatDuration } from "./time/duration-text";
export type { Logger, LogFields } from "./logging/logger";
export type { LoggerOptions, LogStream } from "./logging/create-logger";
export type { LogLevel, LogFormat, LogSettings, Environment } from "./logging/log-settings";
export { LOG_LEVELS, LOG_FORMATS, readLogSettings } from "./logging/log-settings";
export { createLogger, createSilentLogger } from "./logging/create-logger";
export type { BackoffOptions } from "./policy/backoff";
export { backoffDelay, resolveBackoff, DEFAULT_BACKOFF } from "./policy/backoff";
export { isRetryableByDefault } from "./policy/classify-error";

export { JobClient } from "./client/job-client";
export { EventHub } from "./events/event-hub";
export type { EventListener } from "./events/event-hub";
export { WorkerEvents, WORKER_EVENT_NAMES } from "./events/worker-events";
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
  JobWriteFailedEvent,
  JobProgressEvent,
  JobOnDeadFailedEvent,
  WorkerEventBase,
  WorkerStartedEvent,
  QueueDrainedEvent,
  WorkerStoppedEvent,
} from "./events/worker-events";
export { ClientEvents } from "./events/client-events";
export type { ClientEventMap, JobEnqueuedEvent } from "./events/client-events";
export type { BatchItem, EnqueuedJob } from "./client/job-client";
export type { WaitOptions } from "./client/await-job";
export { DEFAULT_WAIT_POLL_MS } from "./client/await-job";
export { JOB_STORE, LOGGER, CLOCK, WORKERS, SCHEDULE_STORE, WAKEUP_SOURCE, LEADER_LOCK, SCHEDULES } from "./di/tokens";
export type { ScheduleStore, ScheduleSpec, ScheduleRecord, SchedulePlan, ScheduleFire, SyncSchedulesParams, FireDueSchedulesParams } from "./store/schedule-store";
export type { WakeupSource, LeaderLock } from "./runtime/coordination";

export { AbstractQueueWorker } from "./worker/abstract-queue-worker";
export { SchemaQueueWorker } from "./worker/schema-queue-worker";
export type { WorkerOptions, ResolvedWorkerOptions } from "./worker/worker-options";
export { resolveWorkerOptions } from "./worker/worker-options";
export type { RunOptions } from "./worker/run-options";
export type { RunSummary, StopReason } from "./worker/run-summary";
export type { JobContext, FailureDecision } from "./worker/job-context";
export type { DeadJobContext } from "./worker/dead-job-context";
export { newWorkerId, processIdentity, applicationName } from "./worker/worker-id";
export type { WorkerClass, AnyQueueWorker } from "./di/register-core";
export { registerLogger, registerWorkers, resolveWorkers, resolveWorker, registerSchedules, resolveSchedules } from "./di/register-core";

export type { ScheduleOptions, ScheduleDefinition } from "./schedule/define-schedule";
export { defineSchedule } from "./schedule/define-schedule";
export { parseCron, planFires, firstRunAt } from "./schedule/cron-plan";

export type { MaintenanceService } from "./maintenance/maintenance-service";
export { LeaseRescuer } from "./maintenance/lease-rescuer";
export { ScheduleTicker } from "./maintenance/schedule-ticker";
export type { RetentionOptions } from "./maintenance/retention-pruner";
export { RetentionPruner } from "./maintenance/retention-pruner";
export type { MaintenanceLoopOptions } from "./maintenance/maintenance-loop";
export { MaintenanceLoop } from "./maintenance/maintenance-loop";

export { ExitCode } from "./runtime/exit-codes";
export type { RunReport } from "./runtime/run-report";
export { summarizeRun } from "./runtime/run-report";
export type { RunWorkersOptions, RunOverrides } from "./runtime/run-workers";
export { runWorkers } from "./runtime/run-workers";
export type { RunFromContainerOptions } from "./runtime/run-from-container";
export { runFromContainer } from "./runtime/run-from-container";
export type { SettingsOptions } from "./runtime/container-settings";
export { resolveContainerSettings } from "./runtime/container-settings";
export type { TunableSettings, TunableSetting, SettingSpec } from "./settings/setting-specs";
export { TUNABLE_SETTINGS, LOG_LEVEL_SETTING } from "./settings/setting-specs";
export type { SettingSource, ResolvedSetting, SettingFlags, QueueSettings, RunSettings, RunSettingsInput } from "./settings/resolve-run-settings";
export { resolveRunSettings, settingOverrides, describeSource } from "./settings/resolve-run-settings";
export { queueVariableSuffix, queueVariable } from "./settings/settings-variables";
export { handleStopSignals } from "./runtime/stop-signals";
export { startHealthServer } from "./runtime/health-server";
export { startRunMetrics, renderMetrics } from "./metrics/run-metrics";
export type { MetricsOptions, MetricsPage } from "./metrics/run-metrics";
export { JobMetrics } from "./metrics/job-metrics";
export type { JobOutcomeLabel } from "./metrics/job-metrics";
export { registerQueueGauges } from "./metrics/queue-gauges-metrics";
export type { HealthChecks } from "./runtime/health-server";
