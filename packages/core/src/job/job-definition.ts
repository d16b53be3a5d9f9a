import { ConfigError } from "../errors/config-errors";
import { assertQueueName } from "../validation/names";
import { integerOption, rejectUnknownOptions } from "../validation/option-checks";
import { resolveSecretFields } from "./secret-fields";
import { DEFAULT_MAX_PAYLOAD_BYTES } from "./serialize-payload";

/** Defaults a job kind gives every job of its kind; each can be overridden at enqueue. */
export interface JobDefaults {
  /** Attempts before the job is dead. Default 25. */
  readonly maxAttempts: number;
  /** Per-attempt time limit in ms; `null` for none. Default `null`. */
  readonly timeoutMs: number | null;
  /** Higher runs first. Default 0. */
  readonly priority: number;
}

/** What {@link defineJob} takes: the job defaults plus the kind's own settings. */
export interface JobKindOptions extends Partial<JobDefaults> {
  /**
   * Largest payload of this kind, in bytes of UTF-8 JSON; a bigger one is
   * refused with a `PayloadError` and nothing is inserted. Default 1 MiB
   * (`DEFAULT_MAX_PAYLOAD_BYTES`). The store has its own cap (the same
   * default) that every path, hand-built jobs included, must also pass.
   */
  readonly maxPayloadBytes?: number;
  /**
   * Dotted paths of payload fields whose values must never appear in logs
   * or `last_error`, such as `["card.number", "apiKey"]` (`*` matches any
   * key; arrays are searched element by element). The worker replaces each
   * value found there with `[redacted]` in the job's log lines and in the
   * stored error text. See {@link redact} for your own logging.
   */
  readonly secretFields?: readonly string[];
}

/**
 * A job kind: its queue name, defaults and settings, with the payload type
 * `T` and the result type `R` (what its handler returns, `unknown` unless
 * declared) carried in the type only. Producers and workers import the same
 * descriptor, so enqueueing the wrong payload does not compile, and
 * `client.waitFor` resolves to an `R`.
 */
export interface JobDefinition<T, R = unknown> {
  readonly name: string;
  readonly defaults: JobDefaults;
  /** Largest payload in bytes of UTF-8 JSON (default 1 MiB). */
  readonly maxPayloadBytes?: number;
  /** Payload fields kept out of logs and `last_error` (default none). */
  readonly secretFields?: readonly string[];
  /** Type-level only: never read at run time. */
  readonly __payload?: (payload: T) => void;
  /** Type-level only: never read at run time. */
  readonly __result?: () => R;
}

/** The payload type of a job kind. */
export type PayloadOf<D> = D extends JobDefinition<infer T> ? T : never;

/** The result type of a job kind (`unknown` when it declares none). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type ResultOf<D> = D extends JobDefinition<any, infer R> ? R : never;

/** The defaults stint uses when a job kind names none. */
export const DEFAULT_JOB_DEFAULTS: JobDefaults = Object.freeze({ maxAttempts: 25, timeoutMs: null, priority: 0 });

const JOB_KIND_KEYS = ["maxAttempts", "timeoutMs", "priority", "maxPayloadBytes", "secretFields"] as const;

/** Largest `maxPayloadBytes` a job kind may ask for: 256 MiB, jsonb's own ceiling. */
export const MAX_PAYLOAD_BYTES_LIMIT = 268_435_455;

/**
 * Declares a job kind. The name is the queue the jobs go to. The second
 * type parameter, when given, is the result its handler returns: a worker
 * declared as `AbstractQueueWorker<T, R>` must return it, and
 * `client.waitFor` resolves to it.
 *
 * @example
 * ```ts
 * interface SendInvoice { invoiceId: number }
 * export const SendInvoice = defineJob<SendInvoice>("send-invoice", { maxAttempts: 10, timeoutMs: 30_000 });
 *
 * await client.enqueue(SendInvoice, { invoiceId: 812 }); // checked by the compiler
 *
 * const ChargeCard = defineJob<ChargeCard>("charge-card", { maxPayloadBytes: 4_096, secretFields: ["card.number"] });
 * const Resize = defineJob<{ imageId: number }, { width: number }>("resize"); // waitFor resolves to { width: number }
 * ```
 */
export function defineJob<T, R = unknown>(name: string, options: JobKindOptions = {}): JobDefinition<T, R> {
  assertQueueName(name);
  if (typeof options !== "object" || options === null) {
    throw new ConfigError("defaults", "must be an object");
  }
  rejectUnknownOptions("defaults", options, JOB_KIND_KEYS);
  return Object.freeze({
    name,
    defaults: Object.freeze(resolveJobDefaults(options)),
    maxPayloadBytes: integerOption("maxPayloadBytes", options.maxPayloadBytes ?? DEFAULT_MAX_PAYLOAD_BYTES, 2, MAX_PAYLOAD_BYTES_LIMIT),
    secretFields: resolveSecretFields(options.secretFields),
  });
}

/** Validates job defaults (also used for enqueue overrides); messages name the option. */
export function resolveJobDefaults(input: Partial<JobDefaults>, base: JobDefaults = DEFAULT_JOB_DEFAULTS): JobDefaults {
  const maxAttempts = integerOption("maxAttempts", input.maxAttempts ?? base.maxAttempts, 1, 1_000);
  const timeoutInput = input.timeoutMs === undefined ? base.timeoutMs : input.timeoutMs;
  const timeoutMs = timeoutInput === null ? null : integerOption("timeoutMs", timeoutInput, 1, 2_147_483_647);
  const priority = integerOption("priority", input.priority ?? base.priority, -32_768, 32_767);
  return { maxAttempts, timeoutMs, priority };
}
