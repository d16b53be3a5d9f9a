// Every limit stint checks, declared once. The migrations' CHECK constraints
// are history and keep their own literals; a test holds them to these values.

/** Milliseconds in a day. */
const DAY_MS = 86_400_000;

/**
 * The largest value of a PostgreSQL `integer` column (2^31 − 1), which
 * bounds every millisecond count stint stores (`timeout_ms`,
 * `duration_ms`) and every setting it hands PostgreSQL in milliseconds.
 */
export const MAX_INT4 = 2_147_483_647;

/** The longest delay Node's timers keep (2^31 − 1 ms, about 24.8 days); a longer one fires at once. */
export const MAX_TIMER_MS = MAX_INT4;

/** Longest queue (and schedule) name. */
export const MAX_QUEUE_NAME_LENGTH = 128;

/** The lowest job priority (`smallint`). */
export const MIN_PRIORITY = -32_768;
/** The highest job priority (`smallint`); higher runs first. */
export const MAX_PRIORITY = 32_767;

/** The most attempts a job may have (`maxAttempts`). */
export const MAX_ATTEMPTS = 1_000;

/** The longest per-attempt time limit (`timeoutMs`) a job may have. */
export const MAX_TIMEOUT_MS = MAX_INT4;

/** The longest an enqueue may put a job off (`delayMs`): ten years. */
export const MAX_DELAY_MS = 10 * 365 * DAY_MS;

/** The longest lease a worker may hold on a job (`leaseMs`): a day. */
export const MAX_LEASE_MS = DAY_MS;

/** Largest payload stint stores unless told otherwise: 1 MiB of JSON text. */
export const DEFAULT_MAX_PAYLOAD_BYTES = 1_048_576;

/** Largest `maxPayloadBytes` a job kind or a store may ask for: 256 MiB, jsonb's own ceiling. */
export const MAX_PAYLOAD_BYTES_LIMIT = 268_435_455;

/**
 * Deepest nesting of objects and arrays a payload may have: 64 levels below
 * the top. The check counts levels before it descends, so a deeper (or
 * cyclic) value is refused with a `PayloadError`, never a stack overflow.
 */
export const MAX_PAYLOAD_DEPTH = 64;

/** Largest `meta` object stint stores: 8 KiB of UTF-8 JSON. */
export const MAX_META_BYTES = 8_192;

/** Largest value `ctx.progress` stores: 2 KiB of UTF-8 JSON (a number, or a small object such as `{ done, of }`). */
export const MAX_PROGRESS_BYTES = 2_048;

/** The most `ctx.log` lines an attempt keeps; past it the oldest go, and one marker says how many. */
export const MAX_JOB_LOG_LINES = 100;

/** The most UTF-8 bytes of JSON an attempt's `ctx.log` lines keep together (32 KiB); past it the oldest go. */
export const MAX_JOB_LOG_BYTES = 32_768;

/** Longest `ctx.log` message, in UTF-16 code units; a longer one is cut with a marker. */
export const MAX_LOG_MESSAGE_LENGTH = 2_000;

/** Largest `fields` object of one `ctx.log` line: 1 KiB of UTF-8 JSON. */
export const MAX_LOG_FIELDS_BYTES = 1_024;

/** Largest handler result stored as it is; a bigger one is replaced by a note saying so. */
export const MAX_RESULT_BYTES = DEFAULT_MAX_PAYLOAD_BYTES;

/** Longest dedupe key, in UTF-16 code units. */
export const MAX_DEDUPE_KEY_LENGTH = 512;

/** Longest group or serial key, in UTF-16 code units. */
export const MAX_GROUP_KEY_LENGTH = 256;

/** Most groups per queue one `listGroups` call reports. */
export const MAX_GROUPS_LISTED = 1_000;

/** Waiting jobs `listGroups` counts per group at most: a group's backlog costs the read no more than this. */
export const GROUP_WAITING_COUNT_CAP = 10_000;

/** Longest window of `unique: { key, forMs }`: as long as the longest delay. */
export const MAX_UNIQUE_FOR_MS = MAX_DELAY_MS;

/** Longest `expireInMs`: as long as the longest delay. */
export const MAX_EXPIRE_IN_MS = MAX_DELAY_MS;

/** Most jobs one pass of the expiry sweep cancels (`cancelExpiredJobs`). */
export const MAX_EXPIRE_BATCH = 10_000;

/** Longest key of `ctx.once`, in UTF-16 code units. */
export const MAX_EFFECT_KEY_LENGTH = 512;

/** Longest worker id, in UTF-16 code units. */
export const MAX_WORKER_ID_LENGTH = 200;

/** Longest `last_error` text stint stores; longer texts are cut with a marker. */
export const MAX_ERROR_TEXT = 8_192;

/** Longest error message an attempt's history record keeps (the stack is kept up to {@link MAX_ERROR_TEXT}). */
export const MAX_ERROR_MESSAGE = 1_000;

/** The longest retention, in days, of finished jobs: globally (`RetentionOptions`) or per queue (`QueueRetention`). */
export const MAX_RETENTION_DAYS = 36_500;

/** The highest running cap a queue may have. */
export const MAX_RUNNING_CAP = 1_000_000;

/** The most starts a rate limit may allow per period. */
export const MAX_RATE_LIMIT = 1_000_000;

/** The longest period of a rate limit: a day. */
export const MAX_RATE_PERIOD_MS = DAY_MS;

/** The most rows one store call claims, deletes or runs again (`limit` of a claim, a prune, a retry of dead jobs). */
export const MAX_BATCH_SIZE = 100_000;

/** The most jobs one page of `listJobs` holds. */
export const MAX_PAGE_SIZE = 10_000;

/** The most expired leases one `rescueExpiredLeases` call handles. */
export const MAX_RESCUE_BATCH = 1_000_000;

/** The most due schedules one `fireDueSchedules` call fires. */
export const MAX_SCHEDULES_PER_FIRE = 10_000;

/** The most missed fires a schedule enqueues after downtime (`catchUp`). */
export const MAX_CATCH_UP = 1_000;

/** The shortest schedule grace (`STINT_SCHEDULE_GRACE`: how long a schedule the code stopped declaring keeps firing): a minute. */
export const MIN_SCHEDULE_GRACE_MS = 60_000;

/** The longest such grace: a year of 365 days. */
export const MAX_SCHEDULE_GRACE_MS = 31_536_000_000;

/** The default grace: a day, longer than a rolling deploy takes, short enough that a deleted schedule stops the next day. */
export const DEFAULT_SCHEDULE_GRACE_MS = DAY_MS;

/** The longest time between two declarations of a running process's schedules: an hour (less when the grace is short). */
export const MAX_DECLARATION_INTERVAL_MS = 3_600_000;

/** Most steps one workflow holds, counting the ones its steps add while it runs (`ctx.addSteps`). */
export const MAX_WORKFLOW_STEPS = 20_000;

/** Most steps one step waits for (the width of a fan-in). */
export const MAX_STEP_DEPENDENCIES = MAX_WORKFLOW_STEPS;

/** Longest workflow or step name, in characters. */
export const MAX_WORKFLOW_NAME_LENGTH = 200;

/** Most dependencies (one step waiting for one other) one workflow holds. */
export const MAX_WORKFLOW_DEPENDENCIES = 100_000;
