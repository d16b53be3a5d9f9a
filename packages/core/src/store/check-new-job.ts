import { checkDeadLetterQueue, DEAD_LETTER_QUEUE_KEY } from "../job/dead-letter";
import { ConfigError } from "../errors/config-errors";
import { assertStorableMeta } from "../job/job-meta";
import { assertPayloadSize, assertStorableJson } from "../job/serialize-payload";
import { MAX_ATTEMPTS, MAX_DEDUPE_KEY_LENGTH, MAX_DELAY_MS, MAX_PRIORITY, MAX_TIMEOUT_MS, MIN_PRIORITY } from "../limits";
import { checkExpiry, checkGroup, checkUniqueWindow } from "./check-new-job-windows";
import { assertQueueName, assertScheduleName, assertStorableKey } from "../validation/names";
import { integerOption, isArray } from "../validation/option-checks";
import type { NewJob } from "./job-store";
import type { ScheduleSpec } from "./schedule-store";

/**
 * Checks a `NewJob` before it is written, whoever built it: the queue name
 * (`InvalidNameError`); priority, attempts, time limit, run time, delay,
 * dedupe key and dedupe mode, unique window, expiry and group (`ConfigError` naming the field, as the
 * enqueue option of that name would); the payload JSON — a string,
 * storable by `jsonb`, within `maxPayloadBytes` (`PayloadError` naming the
 * size and the limit) — and the meta JSON (an object within
 * `MAX_META_BYTES`, `PayloadError`).
 *
 * @example
 * ```ts
 * checkNewJob({ ...buildNewJob(SendInvoice, { invoiceId: 812 }), queue: "Bad Queue" }, 1_048_576); // throws InvalidNameError
 * ```
 */
export function checkNewJob(job: NewJob, maxPayloadBytes: number): void {
  if (typeof job !== "object" || job === null) throw new ConfigError("job", "must be a NewJob object (see buildNewJob)");
  assertQueueName(job.queue);
  integerOption("priority", job.priority, MIN_PRIORITY, MAX_PRIORITY);
  integerOption("maxAttempts", job.maxAttempts, 1, MAX_ATTEMPTS);
  if (job.timeoutMs !== null) integerOption("timeoutMs", job.timeoutMs, 1, MAX_TIMEOUT_MS);
  if (job.runAt !== null && !(job.runAt instanceof Date && Number.isFinite(job.runAt.getTime()))) throw new ConfigError("runAt", "must be a valid Date");
  integerOption("delayMs", job.delayMs, 0, MAX_DELAY_MS);
  if (job.dedupeKey !== null && job.dedupeKey !== undefined) assertStorableKey("dedupeKey", job.dedupeKey, MAX_DEDUPE_KEY_LENGTH);
  checkPayloadJson(job.payloadJson, maxPayloadBytes, job.queue);
  if (job.metaJson !== null && job.metaJson !== undefined) checkMetaJson(job.metaJson, job.queue);
  if (job.onDuplicate !== undefined && job.onDuplicate !== "keep" && job.onDuplicate !== "replace") {
    throw new ConfigError("onDuplicate", `must be "keep" or "replace", got ${JSON.stringify(job.onDuplicate)}`);
  }
  if (job.onDuplicate === "replace" && (job.dedupeKey === null || job.dedupeKey === undefined))
    throw new ConfigError("onDuplicate", '"replace" needs a dedupeKey');
  checkUniqueWindow(job);
  checkExpiry(job);
  checkGroup(job);
}

/**
 * Checks every job of a batch (as {@link checkNewJob}) before any is
 * written; the first problem throws and nothing of the batch is inserted.
 * A batch keeps the jobs that hold its dedupe keys: `replace` is refused,
 * and so is a unique window.
 */
export function checkNewJobs(jobs: readonly NewJob[], maxPayloadBytes: number): void {
  if (!isArray(jobs)) throw new ConfigError("jobs", "must be an array of NewJob objects");
  for (const job of jobs) {
    checkNewJob(job, maxPayloadBytes);
    if (job.onDuplicate === "replace")
      throw new ConfigError("dedupe", 'a batch keeps the jobs that hold its keys; enqueue one by one to "replace" or "debounce"');
    if (job.unique !== undefined && job.unique !== null) throw new ConfigError("unique", "a batch takes no unique windows; enqueue one by one");
  }
}

/** Checks a schedule spec's name, queue, payload and job settings like {@link checkNewJob}. */
export function checkScheduleSpec(spec: ScheduleSpec, maxPayloadBytes: number): void {
  if (typeof spec !== "object" || spec === null) throw new ConfigError("schedules", "must be ScheduleSpec objects (see defineSchedule)");
  assertScheduleName(spec.name);
  assertQueueName(spec.queue);
  integerOption("priority", spec.priority, MIN_PRIORITY, MAX_PRIORITY);
  integerOption("maxAttempts", spec.maxAttempts, 1, MAX_ATTEMPTS);
  if (spec.timeoutMs !== null) integerOption("timeoutMs", spec.timeoutMs, 1, MAX_TIMEOUT_MS);
  checkPayloadJson(spec.payloadJson, maxPayloadBytes, spec.queue);
}

function checkMetaJson(metaJson: unknown, queue: string): void {
  if (typeof metaJson !== "string") throw new ConfigError("metaJson", `must be the meta object as JSON text (see serializeMeta), got ${typeof metaJson}`);
  assertStorableMeta(metaJson, queue);
  let parsed: unknown;
  try {
    parsed = JSON.parse(metaJson);
  } catch {
    throw new ConfigError("metaJson", "must be the meta object as JSON text (see serializeMeta), got text that is not JSON");
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) throw new ConfigError("metaJson", "must be the JSON text of an object");
  const deadLetterQueue = (parsed as Record<string, unknown>)[DEAD_LETTER_QUEUE_KEY];
  if (deadLetterQueue !== undefined) checkDeadLetterQueue(queue, deadLetterQueue);
}

function checkPayloadJson(payloadJson: unknown, maxPayloadBytes: number, queue: string): void {
  if (typeof payloadJson !== "string") {
    throw new ConfigError("payloadJson", `must be the payload as JSON text (see serializePayload), got ${typeof payloadJson}`);
  }
  assertPayloadSize(payloadJson, maxPayloadBytes, queue);
  assertStorableJson(payloadJson, queue);
}
