/**
 * `@stint/core/internal`: helpers that stint's own packages (the CLI, the
 * dashboard, the PostgreSQL store, the chaos suite, the examples) share with
 * `@stint/core`, and no application or store needs. It is not public API:
 * any name here may change or go in any release, without a note in the
 * changelog. An application imports `@stint/core`; a store implementer
 * imports `@stint/core` and `@stint/core/driver`.
 *
 * @example
 * ```ts
 * // In a package of this repository only:
 * import { formatDuration } from "@stint/core/internal";
 * formatDuration(90_000); // "1m30s"
 * ```
 *
 * @packageDocumentation
 */
// tsyringe reads decorator metadata, so the polyfill loads before anything else.
import "reflect-metadata";

export { coerceError } from "./errors/coerce-error";
export {
  MAX_TIMER_MS,
  MAX_RUNNING_CAP,
  MIN_SCHEDULE_GRACE_MS,
  MAX_SCHEDULE_GRACE_MS,
  DEFAULT_SCHEDULE_GRACE_MS,
  MAX_UNIQUE_FOR_MS,
  MAX_EXPIRE_IN_MS,
} from "./limits";
export { secretValuesOf, REDACTED } from "./job/secret-fields";
export { parseRateLimit, formatRateLimit } from "./queue/rate-limit-text";
export { CANCEL_BATCH_SIZE } from "./client/queue-admin";
export { seededRandom } from "./time/seeded-random";
export { parseDuration, formatDuration } from "./time/duration-text";
export { WORKER_EVENT_NAMES } from "./events/worker-events";
export { WORKERS } from "./di/tokens";
export { resolveWorkerOptions } from "./worker/worker-options";
export { processIdentity, applicationName } from "./worker/worker-id";
export { parseCron } from "./schedule/cron-plan";
export { isScheduleLive } from "./schedule/schedule-grace";
export type { SettingsOptions } from "./runtime/container-settings";
export { resolveContainerSettings } from "./runtime/container-settings";
export type { SettingSpec } from "./settings/setting-specs";
export { TUNABLE_SETTINGS, LOG_LEVEL_SETTING, SCHEDULE_GRACE_SETTING } from "./settings/setting-specs";
export type { SettingSource, ResolvedSetting, QueueSettings, RunSettings, RunSettingsInput } from "./settings/resolve-run-settings";
export { resolveRunSettings, describeSource } from "./settings/resolve-run-settings";
export { startHealthServer } from "./runtime/health-server";
export type { HealthChecks } from "./runtime/health-server";
export { renderMetrics } from "./metrics/run-metrics";
export type { MetricsPage } from "./metrics/run-metrics";
export { registerQueueGauges } from "./metrics/queue-gauges-metrics";
export { registerGroupGauges, DEFAULT_TOP_GROUPS } from "./metrics/group-gauges-metrics";
export { EMPTY_META } from "./job/job-meta";
export { DEAD_LETTER_COPY_KEY, DEAD_LETTER_ORIGIN_KEY, DEAD_LETTER_QUEUE_KEY, deadLetterLinks } from "./job/dead-letter";
export type { DeadLetterLinks } from "./job/dead-letter";
export { numberOption } from "./validation/option-checks";
export { infiniteTimeName } from "./time/time-bounds";
export { planQueuesRetention, planRetention } from "./maintenance/queue-retention-plan";
export { DEFAULT_RETENTION_DAYS } from "./maintenance/retention-pruner";
export type { GlobalRetention, RetentionStep } from "./maintenance/queue-retention-plan";
export { planWorkflowSteps, assertWorkflowName } from "./workflow/plan-workflow";
export { workflowState } from "./workflow/workflow-record";
export { MAX_WATCHED_STEPS } from "./client/await-step-ends";
