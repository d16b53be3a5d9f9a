import {
  assertPayloadSize,
  assertQueueName,
  assertScheduleName,
  assertStorableJson,
  assertStorableKey,
  assertStorableMeta,
  ConfigError,
  MAX_DEDUPE_KEY_LENGTH,
  type NewJob,
  type ScheduleSpec,
} from "@stint/core";

/**
 * Checks a `NewJob` the way `buildNewJob` would have built it, before any
 * SQL runs, so that a hand-built job cannot store what a job kind refuses:
 * the queue name (`InvalidNameError`), the dedupe key (`ConfigError`), and
 * the payload JSON — a string, storable by `jsonb`, within `maxPayloadBytes`
 * (`PayloadError` naming the size and the limit) — and the meta JSON (an
 * object within `MAX_META_BYTES`, `PayloadError`).
 *
 * @example
 * ```ts
 * checkNewJob({ ...buildNewJob(SendInvoice, { invoiceId: 812 }), queue: "Bad Queue" }, 1_048_576); // throws InvalidNameError
 * ```
 */
export function checkNewJob(job: NewJob, maxPayloadBytes: number): void {
  if (typeof job !== "object" || job === null) throw new ConfigError("job", "must be a NewJob object (see buildNewJob)");
  assertQueueName(job.queue);
  if (job.dedupeKey !== null && job.dedupeKey !== undefined) assertStorableKey("dedupeKey", job.dedupeKey, MAX_DEDUPE_KEY_LENGTH);
  checkPayloadJson(job.payloadJson, maxPayloadBytes, job.queue);
  if (job.metaJson !== null && job.metaJson !== undefined) checkMetaJson(job.metaJson, job.queue);
  if (job.onDuplicate !== undefined && job.onDuplicate !== "keep" && job.onDuplicate !== "replace") {
    throw new ConfigError("onDuplicate", `must be "keep" or "replace", got ${JSON.stringify(job.onDuplicate)}`);
  }
  if (job.onDuplicate === "replace" && (job.dedupeKey === null || job.dedupeKey === undefined)) throw new ConfigError("onDuplicate", '"replace" needs a dedupeKey');
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
}

/**
 * Checks every job of a batch before any is written; the first problem
 * throws and nothing of the batch is inserted.
 */
export function checkNewJobs(jobs: readonly NewJob[], maxPayloadBytes: number): void {
  if (!Array.isArray(jobs)) throw new ConfigError("jobs", "must be an array of NewJob objects");
  for (const job of jobs as readonly NewJob[]) {
    checkNewJob(job, maxPayloadBytes);
    if (job.onDuplicate === "replace") throw new ConfigError("dedupe", 'a batch keeps the jobs that hold its keys; enqueue one by one to "replace" or "debounce"');
  }
}

/** Checks a schedule spec's name, queue and payload like {@link checkNewJob}. */
export function checkScheduleSpec(spec: ScheduleSpec, maxPayloadBytes: number): void {
  if (typeof spec !== "object" || spec === null) throw new ConfigError("schedules", "must be ScheduleSpec objects (see defineSchedule)");
  assertScheduleName(spec.name);
  assertQueueName(spec.queue);
  checkPayloadJson(spec.payloadJson, maxPayloadBytes, spec.queue);
}

function checkPayloadJson(payloadJson: unknown, maxPayloadBytes: number, queue: string): void {
  if (typeof payloadJson !== "string") {
    throw new ConfigError("payloadJson", `must be the payload as JSON text (see serializePayload), got ${typeof payloadJson}`);
  }
  assertPayloadSize(payloadJson, maxPayloadBytes, queue);
  assertStorableJson(payloadJson, queue);
}
