import { ConfigError } from "../errors/config-errors";
import { MAX_ERROR_MESSAGE } from "../limits";
import { assertQueueName } from "../validation/names";
import type { JsonObject } from "./json-types";

/**
 * The `meta` key naming the queue a job is copied to when it dies, written
 * at enqueue from its kind's `deadLetterQueue`. The store reads it in the
 * statement that records the death.
 */
export const DEAD_LETTER_QUEUE_KEY = "stint.deadLetterQueue";

/** The `meta` key of a dead-letter copy: where it came from (a {@link DeadLetterOrigin}). */
export const DEAD_LETTER_ORIGIN_KEY = "stint.deadLetter";

/** The `meta` key a routed dead job gets: the id of its dead-letter copy. */
export const DEAD_LETTER_COPY_KEY = "stint.deadLetterJobId";

/**
 * The job a dead-letter copy was made from, as the copy's
 * `ctx.meta["stint.deadLetter"]` holds it.
 *
 * @example
 * ```ts
 * protected async processItem(item: Refund, ctx: JobContext) {
 *   const origin = ctx.meta["stint.deadLetter"] as DeadLetterOrigin | undefined;
 *   await alerts.post(`refund ${item.refundId} died in job ${origin?.jobId}: ${origin?.error}`);
 * }
 * ```
 */
export interface DeadLetterOrigin {
  /** The dead job's id: its attempts and full error stay with it (`stint jobs show <id>`). */
  readonly jobId: string;
  readonly queue: string;
  /** Attempts it made before it died. */
  readonly attempts: number;
  /** The error code of its death, such as `STINT_PERMANENT`, or `null`. */
  readonly errorCode: string | null;
  /** The first line of its error (at most `MAX_ERROR_MESSAGE` characters), or `null`. */
  readonly error: string | null;
}

/** What a job's `meta` says about dead-lettering it: see {@link deadLetterLinks}. */
export interface DeadLetterLinks {
  /** The queue it is copied to when it dies, or `null`. */
  readonly queue: string | null;
  /** The id of its copy, once it died and was copied, or `null`. */
  readonly copyId: string | null;
  /** On a copy, the job it was made from; otherwise `null`. */
  readonly origin: DeadLetterOrigin | null;
}

/**
 * Reads the dead-letter keys of a job's `meta`: where it goes when it dies,
 * the copy it became, or (on a copy) the job it came from. What the CLI
 * and the dashboard show.
 *
 * @example
 * ```ts
 * const { copyId } = deadLetterLinks(job.meta);
 * if (copyId !== null) console.log(`copied to job ${copyId}`);
 * ```
 */
export function deadLetterLinks(meta: JsonObject): DeadLetterLinks {
  const queue = meta[DEAD_LETTER_QUEUE_KEY];
  const copyId = meta[DEAD_LETTER_COPY_KEY];
  return Object.freeze({
    queue: typeof queue === "string" ? queue : null,
    copyId: typeof copyId === "string" ? copyId : null,
    origin: originOf(meta[DEAD_LETTER_ORIGIN_KEY]),
  });
}

function originOf(value: unknown): DeadLetterOrigin | null {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return null;
  const origin = value as Partial<Record<keyof DeadLetterOrigin, unknown>>;
  if (typeof origin.jobId !== "string" || typeof origin.queue !== "string") return null;
  return Object.freeze({
    jobId: origin.jobId,
    queue: origin.queue,
    attempts: typeof origin.attempts === "number" ? origin.attempts : 0,
    errorCode: typeof origin.errorCode === "string" ? origin.errorCode : null,
    error: typeof origin.error === "string" ? origin.error : null,
  });
}

/**
 * Checks a job kind's `deadLetterQueue`: a queue name other than the
 * kind's own. Throws `ConfigError` naming the setting.
 */
export function checkDeadLetterQueue(kind: string, queue: unknown): string {
  if (typeof queue !== "string") throw new ConfigError("deadLetterQueue", `must be a queue name, got ${typeof queue}`);
  try {
    assertQueueName(queue);
  } catch (error) {
    throw new ConfigError("deadLetterQueue", (error as Error).message);
  }
  if (queue === kind) throw new ConfigError("deadLetterQueue", `must name another queue than the kind's own ("${kind}")`);
  return queue;
}

/** `meta` naming `queue` as the dead-letter queue (unchanged when `queue` is undefined). */
export function withDeadLetterQueue(meta: JsonObject | undefined, queue: string | undefined): JsonObject | undefined {
  return queue === undefined ? meta : { ...meta, [DEAD_LETTER_QUEUE_KEY]: queue };
}

/**
 * The queue a job that just died is copied to: the one its meta names,
 * unless it is itself a copy (a copy is never copied again, so two queues
 * that name each other cannot loop), or `null`.
 */
export function deadLetterTarget(meta: JsonObject): string | null {
  const queue = meta[DEAD_LETTER_QUEUE_KEY];
  if (typeof queue !== "string" || queue.length < 1 || queue.length > 128) return null;
  return meta[DEAD_LETTER_ORIGIN_KEY] === undefined ? queue : null;
}

/** The meta of the copy of a dead job: the original's, without its routing keys, with its origin. */
export function deadLetterCopyMeta(meta: JsonObject, origin: DeadLetterOrigin): JsonObject {
  const kept = Object.entries(meta).filter(([key]) => key !== DEAD_LETTER_QUEUE_KEY && key !== DEAD_LETTER_COPY_KEY);
  return { ...Object.fromEntries(kept), [DEAD_LETTER_ORIGIN_KEY]: { ...origin } };
}

/** The `error` of a {@link DeadLetterOrigin}: the first line of the stored error, capped. */
export function originError(lastError: string | null): string | null {
  // By characters, as the SQL store's left() counts them.
  return lastError === null ? null : Array.from(lastError.split("\n", 1)[0]!).slice(0, MAX_ERROR_MESSAGE).join("");
}
