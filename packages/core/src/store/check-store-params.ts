import { ConfigError } from "../errors/config-errors";
import { FINISHED_JOB_STATES, JOB_STATES } from "../job/job-state";
import { assertPayloadSize, assertStorableJson } from "../job/serialize-payload";
import {
  MAX_BATCH_SIZE,
  MAX_EFFECT_KEY_LENGTH,
  MAX_INT4,
  MAX_JOB_LOG_BYTES,
  MAX_JOB_LOG_LINES,
  MAX_LEASE_MS,
  MAX_META_BYTES,
  MAX_PAGE_SIZE,
  MAX_PROGRESS_BYTES,
  MAX_RESCUE_BATCH,
  MAX_EXPIRE_BATCH,
  MAX_WORKER_ID_LENGTH,
  MAX_GROUP_KEY_LENGTH,
  MAX_GROUPS_LISTED,
} from "../limits";
import { assertQueueName, assertStorableKey, assertStoredQueueName } from "../validation/names";
import { integerOption, isArray } from "../validation/option-checks";
import type { CompletedJob, DeadJob, JobAttempt, JobFailure, JobLogAppend, MetaUpdate, ProgressWrite, RetryingJob } from "./job-store";
import type {
  CancelJobsParams,
  ClaimBatchParams,
  ClaimDeadHooksParams,
  CompleteInTransactionParams,
  CountByQueueParams,
  DeleteEffectsBeforeParams,
  DeleteFinishedBeforeParams,
  ExtendLeasesParams,
  FinishDeadHooksParams,
  JobIdParams,
  LineParams,
  ListAttemptsParams,
  ListJobsParams,
  ListGroupsParams,
  ReadQueueGaugesParams,
  RescueExpiredLeasesParams,
  CancelExpiredJobsParams,
  DeleteClosedWindowsParams,
  RetryDeadJobsParams,
  RunEffectOnceParams,
  WaitingJobState,
  WorkerBatch,
} from "./store-params";

// One check per JobStore call, run by CheckedJobStore before the store sees
// the call. A refusal throws a ConfigError naming the field (an
// InvalidNameError for a queue name, a PayloadError for JSON text). The
// calls a worker makes for every batch allocate nothing unless they throw.

const RETRY_OUTCOMES: readonly unknown[] = [undefined, null, "failed", "lease-lost", "shutdown", "snoozed"];
const DEAD_OUTCOMES: readonly unknown[] = [undefined, "dead", "lease-lost"];
const WAITING_STATES: readonly unknown[] = ["queued", "failed"] satisfies WaitingJobState[];

export function checkClaimBatch(params: ClaimBatchParams): void {
  checkClaim(params);
  if (params.maxTimeoutMs !== undefined && !(Number.isFinite(params.maxTimeoutMs) && params.maxTimeoutMs >= 0)) {
    throw new ConfigError("maxTimeoutMs", `must be a number from 0, got ${describe(params.maxTimeoutMs)}`);
  }
  if (params.takeOverExpired !== undefined && typeof params.takeOverExpired !== "boolean") throw new ConfigError("takeOverExpired", "must be true or false");
  if (params.durable !== undefined && typeof params.durable !== "boolean") throw new ConfigError("durable", "must be true or false");
}

export function checkClaimDeadHooks(params: ClaimDeadHooksParams): void {
  checkClaim(params);
}

export function checkExtendLeases(params: ExtendLeasesParams): void {
  checkWorkerId(params.workerId);
  integerOption("leaseMs", params.leaseMs, 1, MAX_LEASE_MS);
  checkEach("jobs", params.jobs, checkJobAttempt);
}

export function checkCompleteJobs(params: WorkerBatch<CompletedJob>): void {
  checkWorkerId(params.workerId);
  checkEach("jobs", params.jobs, checkCompletion);
}

export function checkScheduleRetries(params: WorkerBatch<RetryingJob>): void {
  checkWorkerId(params.workerId);
  checkEach("jobs", params.jobs, checkRetry);
}

export function checkMarkJobsDead(params: WorkerBatch<DeadJob>): void {
  checkWorkerId(params.workerId);
  checkEach("jobs", params.jobs, checkDeath);
}

export function checkFinishDeadHooks(params: FinishDeadHooksParams): void {
  checkWorkerId(params.workerId);
  checkEach("hooks", params.hooks, checkJobAttempt);
}

export function checkProgressWrite(params: ProgressWrite): void {
  checkWorkerId(params.workerId);
  checkJobAttempt("job", params.job);
  if (typeof params.progressJson !== "string") throw new ConfigError("progressJson", "must be the progress value as JSON text (see serializeProgress)");
  assertPayloadSize(params.progressJson, MAX_PROGRESS_BYTES);
  assertStorableJson(params.progressJson);
}

export function checkMetaUpdate(params: MetaUpdate): void {
  checkWorkerId(params.workerId);
  checkJobAttempt("job", params.job);
  if (typeof params.patchJson !== "string" || !params.patchJson.startsWith("{")) {
    throw new ConfigError("patchJson", "must be the patch as the JSON text of an object (see serializeMetaPatch)");
  }
  assertPayloadSize(params.patchJson, MAX_META_BYTES);
  assertStorableJson(params.patchJson);
}

export function checkJobLogAppend(params: JobLogAppend): void {
  checkWorkerId(params.workerId);
  checkJobAttempt("job", params.job);
  if (!isArray(params.linesJson) || params.linesJson.length > MAX_JOB_LOG_LINES) {
    throw new ConfigError("linesJson", `must be an array of at most ${MAX_JOB_LOG_LINES} lines as JSON text (see serializeLogLine)`);
  }
  for (const line of params.linesJson) {
    if (typeof line !== "string" || !line.startsWith("{")) throw new ConfigError("linesJson", "must hold each line as the JSON text of an object");
    assertPayloadSize(line, MAX_JOB_LOG_BYTES);
    assertStorableJson(line);
  }
  integerOption("droppedLines", params.droppedLines, 0, MAX_INT4);
}

export function checkCompleteInTransaction(params: CompleteInTransactionParams, work: unknown): void {
  checkWorkerId(params.workerId);
  checkJobAttempt("job", params.job);
  checkFunction("resultJson", params.resultJson);
  checkFunction("work", work);
}

export function checkRunEffectOnce(params: RunEffectOnceParams, effect: unknown): void {
  assertStorableKey("key", params.key, MAX_EFFECT_KEY_LENGTH);
  checkJobId("jobId", params.jobId);
  checkFunction("resultJson", params.resultJson);
  checkFunction("effect", effect);
}

export function checkRescueExpiredLeases(params: RescueExpiredLeasesParams): void {
  integerOption("limit", params.limit, 1, MAX_RESCUE_BATCH);
  checkQueueList(params.queues);
}

export function checkCancelExpiredJobs(params: CancelExpiredJobsParams): void {
  integerOption("limit", params.limit, 1, MAX_EXPIRE_BATCH);
  checkQueueList(params.queues);
}

export function checkDeleteClosedWindows(params: DeleteClosedWindowsParams): void {
  integerOption("limit", params.limit, 1, MAX_EXPIRE_BATCH);
  checkQueueList(params.queues);
}

export function checkJobIdParams(params: JobIdParams): void {
  checkJobId("id", params.id);
}

export function checkListAttempts(params: ListAttemptsParams): void {
  checkJobId("jobId", params.jobId);
}

export function checkCountByQueue(params: CountByQueueParams | undefined): void {
  checkQueueList(params?.queues);
  if (params?.completedSinceMs !== undefined) checkAgeMs("completedSinceMs", params.completedSinceMs);
}

export function checkReadQueueGauges(params: ReadQueueGaugesParams | undefined): void {
  checkQueueList(params?.queues);
}

export function checkListJobs(params: ListJobsParams): void {
  integerOption("limit", params.limit, 1, MAX_PAGE_SIZE);
  if (params.queue !== undefined) assertQueueName(params.queue);
  if (params.states !== undefined) checkStates(params.states, JOB_STATES);
  if (params.beforeId !== undefined) checkJobId("beforeId", params.beforeId);
  if (params.group !== undefined) assertStorableKey("group", params.group, MAX_GROUP_KEY_LENGTH);
  if (params.serialKey !== undefined) assertStorableKey("serialKey", params.serialKey, MAX_GROUP_KEY_LENGTH);
  if (params.group !== undefined && params.serialKey !== undefined)
    throw new ConfigError("serialKey", "cannot be given with group: a job has one or the other");
}

export function checkListGroups(params: ListGroupsParams): void {
  checkQueueList(params.queues);
  integerOption("limit", params.limit, 1, MAX_GROUPS_LISTED);
  if (params.runningOnly !== undefined && typeof params.runningOnly !== "boolean") throw new ConfigError("runningOnly", "must be true or false");
}

export function checkDeleteFinishedBefore(params: DeleteFinishedBeforeParams): void {
  checkStates(params.states, FINISHED_JOB_STATES);
  checkAgeMs("olderThanMs", params.olderThanMs);
  integerOption("limit", params.limit, 1, MAX_BATCH_SIZE);
  checkQueueList(params.queues);
  checkQueueList(params.exceptQueues, "exceptQueues");
  if (params.queues !== undefined && params.exceptQueues !== undefined) throw new ConfigError("exceptQueues", "cannot be given with queues");
}

export function checkDeleteEffectsBefore(params: DeleteEffectsBeforeParams): void {
  checkAgeMs("olderThanMs", params.olderThanMs);
  integerOption("limit", params.limit, 1, MAX_BATCH_SIZE);
}

export function checkCancelJobs(params: CancelJobsParams): void {
  // A queue written by SQL may break the naming rule; the statement only changes jobs it already holds.
  assertStoredQueueName(params.queue);
  if (!isArray(params.states) || params.states.length === 0 || !params.states.every((state) => WAITING_STATES.includes(state))) {
    throw new ConfigError("states", `must be a non-empty list of queued and failed (a running job is cancelled by id), got ${describe(params.states)}`);
  }
  integerOption("limit", params.limit, 1, MAX_BATCH_SIZE);
}

export function checkRetryDeadJobs(params: RetryDeadJobsParams): void {
  assertStoredQueueName(params.queue);
  integerOption("limit", params.limit, 1, MAX_BATCH_SIZE);
}

export function checkLineParams(params: LineParams): void {
  assertStoredQueueName(params.queue);
  assertStorableKey("key", params.key, MAX_GROUP_KEY_LENGTH);
}

function checkClaim(params: { readonly queue: string; readonly workerId: string; readonly limit: number; readonly leaseMs: number }): void {
  assertQueueName(params.queue);
  checkWorkerId(params.workerId);
  integerOption("limit", params.limit, 1, MAX_BATCH_SIZE);
  integerOption("leaseMs", params.leaseMs, 1, MAX_LEASE_MS);
}

export function checkWorkerId(workerId: unknown): void {
  assertStorableKey("workerId", workerId, MAX_WORKER_ID_LENGTH);
}

/** Runs `check` on every item of `items`, an array; the option names the list in messages. */
function checkEach<T>(option: string, items: readonly T[], check: (option: string, item: T) => void): void {
  if (!isArray(items)) throw new ConfigError(option, "must be an array");
  for (let index = 0; index < items.length; index += 1) check(option, items[index]!);
}

/** An attempt's fence: the job's id and the attempt's number (from 1). */
export function checkJobAttempt(option: string, job: JobAttempt): void {
  if (typeof job !== "object" || job === null) throw new ConfigError(option, `must be { id, attempt } objects, got ${describe(job)}`);
  if (!isJobId(job.id)) throw new ConfigError(`${option}.id`, `must be a job id (a non-empty string), got ${describe(job.id)}`);
  if (!Number.isInteger(job.attempt) || job.attempt < 1)
    throw new ConfigError(`${option}.attempt`, `must be a whole number from 1, got ${describe(job.attempt)}`);
}

/** One success to record: the fence, the result as JSON text or `null`, and a measured duration. */
function checkCompletion(option: string, job: CompletedJob): void {
  checkJobAttempt(option, job);
  if (job.resultJson !== null && typeof job.resultJson !== "string")
    throw new ConfigError(`${option}.resultJson`, "must be JSON text (see serializeResult) or null");
  if (!Number.isFinite(job.durationMs)) throw new ConfigError(`${option}.durationMs`, `must be a finite number, got ${describe(job.durationMs)}`);
}

/** One retry to schedule: the fence, a delay from 0, the failure (or `null`), whether it spends the attempt, and its history outcome. */
function checkRetry(option: string, job: RetryingJob): void {
  checkJobAttempt(option, job);
  if (!(Number.isFinite(job.delayMs) && job.delayMs >= 0 && job.delayMs <= Number.MAX_SAFE_INTEGER)) {
    throw new ConfigError(`${option}.delayMs`, `must be a number from 0 to ${Number.MAX_SAFE_INTEGER}, got ${describe(job.delayMs)}`);
  }
  if (job.failure !== null) checkFailure(option, job.failure);
  if (typeof job.spendAttempt !== "boolean") throw new ConfigError(`${option}.spendAttempt`, "must be true or false");
  if (!RETRY_OUTCOMES.includes(job.outcome))
    throw new ConfigError(`${option}.outcome`, `must be one of failed, lease-lost, shutdown, snoozed or null, got ${describe(job.outcome)}`);
  checkWorkerDuration(option, job.durationMs);
}

/** One death to record: the fence, its failure, and its history outcome. */
function checkDeath(option: string, job: DeadJob): void {
  checkJobAttempt(option, job);
  checkFailure(option, job.failure);
  if (!DEAD_OUTCOMES.includes(job.outcome)) throw new ConfigError(`${option}.outcome`, `must be "dead" or "lease-lost", got ${describe(job.outcome)}`);
  checkWorkerDuration(option, job.durationMs);
  if (job.deadLetter !== undefined && typeof job.deadLetter !== "boolean")
    throw new ConfigError(`${option}.deadLetter`, `must be true or false, got ${describe(job.deadLetter)}`);
}

function checkFailure(option: string, failure: JobFailure): void {
  if (typeof failure !== "object" || failure === null || typeof failure.message !== "string") {
    throw new ConfigError(`${option}.failure`, "must be { message, code } with the error's text (see describeError)");
  }
  if (failure.code !== null && typeof failure.code !== "string") throw new ConfigError(`${option}.failure.code`, "must be an error code string or null");
  if (failure.summary !== undefined && typeof failure.summary !== "string") throw new ConfigError(`${option}.failure.summary`, "must be a string when given");
}

function checkWorkerDuration(option: string, durationMs: number | null | undefined): void {
  if (durationMs !== undefined && durationMs !== null && !Number.isFinite(durationMs)) {
    throw new ConfigError(`${option}.durationMs`, `must be a finite number, null or left out, got ${describe(durationMs)}`);
  }
}

export function checkJobId(option: string, id: unknown): void {
  if (!isJobId(id)) throw new ConfigError(option, `must be a job id (a non-empty string), got ${describe(id)}`);
}

function isJobId(id: unknown): boolean {
  return typeof id === "string" && id !== "";
}

function checkQueueList(queues: readonly string[] | undefined, option = "queues"): void {
  if (queues === undefined) return;
  if (!Array.isArray(queues)) throw new ConfigError(option, "must be an array of queue names");
  for (const queue of queues) assertQueueName(queue);
}

function checkStates(states: readonly string[], allowed: readonly string[]): void {
  if (!Array.isArray(states) || states.length === 0 || !states.every((state: string) => allowed.includes(state))) {
    throw new ConfigError("states", `must be a non-empty list of ${allowed.join(", ")}, got ${JSON.stringify(states)}`);
  }
}

function checkAgeMs(option: string, ms: unknown): void {
  integerOption(option, ms, 0, Number.MAX_SAFE_INTEGER);
}

function checkFunction(option: string, value: unknown): void {
  if (typeof value !== "function") throw new ConfigError(option, "must be a function");
}

function describe(value: unknown): string {
  return typeof value === "string" ? JSON.stringify(value) : String(value);
}
