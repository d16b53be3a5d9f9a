import { ConfigError } from "../errors/config-errors";
import { assertQueueName } from "../validation/names";
import { integerOption, rejectUnknownOptions } from "../validation/option-checks";

/** Defaults a job kind gives every job of its kind; each can be overridden at enqueue. */
export interface JobDefaults {
  /** Attempts before the job is dead. Default 25. */
  readonly maxAttempts: number;
  /** Per-attempt time limit in ms; `null` for none. Default `null`. */
  readonly timeoutMs: number | null;
  /** Higher runs first. Default 0. */
  readonly priority: number;
}

/**
 * A job kind: its queue name and defaults, with the payload type `T`
 * carried in the type only. Producers and workers import the same
 * descriptor, so enqueueing the wrong payload does not compile.
 */
export interface JobDefinition<T> {
  readonly name: string;
  readonly defaults: JobDefaults;
  /** Type-level only: never read at run time. */
  readonly __payload?: (payload: T) => void;
}

/** The payload type of a job kind. */
export type PayloadOf<D> = D extends JobDefinition<infer T> ? T : never;

/** The defaults stint uses when a job kind names none. */
export const DEFAULT_JOB_DEFAULTS: JobDefaults = Object.freeze({ maxAttempts: 25, timeoutMs: null, priority: 0 });

const JOB_DEFAULT_KEYS = ["maxAttempts", "timeoutMs", "priority"] as const;

/**
 * Declares a job kind. The name is the queue the jobs go to.
 *
 * @example
 * ```ts
 * interface SendInvoice { invoiceId: number }
 * export const SendInvoice = defineJob<SendInvoice>("send-invoice", { maxAttempts: 10, timeoutMs: 30_000 });
 *
 * await client.enqueue(SendInvoice, { invoiceId: 812 }); // checked by the compiler
 * ```
 */
export function defineJob<T>(name: string, defaults: Partial<JobDefaults> = {}): JobDefinition<T> {
  assertQueueName(name);
  if (typeof defaults !== "object" || defaults === null) {
    throw new ConfigError("defaults", "must be an object");
  }
  rejectUnknownOptions("defaults", defaults, JOB_DEFAULT_KEYS);
  return Object.freeze({ name, defaults: Object.freeze(resolveJobDefaults(defaults)) });
}

/** Validates job defaults (also used for enqueue overrides); messages name the option. */
export function resolveJobDefaults(input: Partial<JobDefaults>, base: JobDefaults = DEFAULT_JOB_DEFAULTS): JobDefaults {
  const maxAttempts = integerOption("maxAttempts", input.maxAttempts ?? base.maxAttempts, 1, 1_000);
  const timeoutInput = input.timeoutMs === undefined ? base.timeoutMs : input.timeoutMs;
  const timeoutMs = timeoutInput === null ? null : integerOption("timeoutMs", timeoutInput, 1, 2_147_483_647);
  const priority = integerOption("priority", input.priority ?? base.priority, -32_768, 32_767);
  return { maxAttempts, timeoutMs, priority };
}
