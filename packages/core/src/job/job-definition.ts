import type { StandardSchemaV1 } from "@standard-schema/spec";
import { ConfigError } from "../errors/config-errors";
import { isStandardSchema, type PayloadSchema } from "./payload-schema";
import { assertQueueName } from "../validation/names";
import { integerOption, rejectUnknownOptions } from "../validation/option-checks";
import { resolveSecretFields } from "./secret-fields";
import { checkDeadLetterQueue } from "./dead-letter";
import { DEFAULT_MAX_PAYLOAD_BYTES, MAX_ATTEMPTS, MAX_PAYLOAD_BYTES_LIMIT, MAX_PRIORITY, MAX_TIMEOUT_MS, MIN_PRIORITY } from "../limits";

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
  /**
   * A queue that gets a copy of every job of this kind that dies (attempts
   * spent, a permanent error, a payload that does not parse, or a worker
   * that died on the last attempt): in the statement that records the
   * death, a new job with the same payload is enqueued there, its `meta`
   * naming the dead job (`stint.deadLetter`, a {@link DeadLetterOrigin}). An operator's cancel
   * is not a death. A copy is never copied again. Default none.
   */
  readonly deadLetterQueue?: string;
}

/** {@link JobKindOptions} with a payload schema: see {@link defineJob}. */
export interface SchemaJobKindOptions<S extends PayloadSchema> extends JobKindOptions {
  /**
   * A Standard Schema validator of the payload (a zod, valibot or arktype
   * schema, or your own object with a `~standard` property). `enqueue`
   * refuses a payload it rejects with a `PayloadSchemaError` and inserts
   * nothing; a worker extending `SchemaQueueWorker` validates each stored
   * payload with it before `processItem`, and a job whose payload fails goes
   * to `dead` with the validator's messages.
   */
  readonly schema: S;
}

/**
 * A job kind: its queue name, defaults and settings, with the payload type
 * `T`, the result type `R` (what its handler returns, `unknown` unless
 * declared) and the item type `Item` (what its worker works on: the
 * schema's output, else `T`) carried in the type only. Producers and
 * workers import the same descriptor, so enqueueing the wrong payload does
 * not compile, and `client.waitFor` resolves to an `R`.
 */
export interface JobDefinition<T, R = unknown, Item = T> {
  readonly name: string;
  readonly defaults: JobDefaults;
  /** Largest payload in bytes of UTF-8 JSON (default 1 MiB). */
  readonly maxPayloadBytes?: number;
  /** Payload fields kept out of logs and `last_error` (default none). */
  readonly secretFields?: readonly string[];
  /** The queue a copy of each dead job of this kind goes to (see {@link JobKindOptions.deadLetterQueue}). */
  readonly deadLetterQueue?: string;
  /** The payload's Standard Schema validator, when the kind was defined with one. */
  readonly schema?: PayloadSchema<unknown, Item>;
  /** Type-level only: never read at run time. */
  readonly __payload?: (payload: T) => void;
  /** Type-level only: never read at run time. */
  readonly __result?: () => R;
  /** Type-level only: never read at run time. */
  readonly __item?: () => Item;
}

/** A job kind defined with a schema: `T` is what the schema accepts, `Item` what it outputs. */
export interface SchemaJobDefinition<T, R = unknown, Item = T> extends JobDefinition<T, R, Item> {
  readonly schema: PayloadSchema<unknown, Item>;
}

/** The payload type of a job kind (what `enqueue` takes). */
export type PayloadOf<D> = D extends JobDefinition<infer T, any, any> ? T : never;

/** The item type of a job kind (what its worker's `processItem` gets: the schema's output, else the payload type). */
export type ItemOf<D> = D extends JobDefinition<any, any, infer Item> ? Item : never;

/** The result type of a job kind (`unknown` when it declares none). */
export type ResultOf<D> = D extends JobDefinition<any, infer R> ? R : never;

/** The defaults stint uses when a job kind names none. */
export const DEFAULT_JOB_DEFAULTS: JobDefaults = Object.freeze({ maxAttempts: 25, timeoutMs: null, priority: 0 });

const JOB_KIND_KEYS = ["maxAttempts", "timeoutMs", "priority", "maxPayloadBytes", "secretFields", "deadLetterQueue", "schema"] as const;

/**
 * Declares a job kind. The name is the queue the jobs go to. The second
 * type parameter, when given, is the result its handler returns: a worker
 * declared as `AbstractQueueWorker<T, R>` must return it, and
 * `client.waitFor` resolves to it.
 *
 * With a `schema` (any Standard Schema validator: zod, valibot, arktype …)
 * the payload type is the schema's input, `enqueue` validates every
 * payload before inserting it, and a `SchemaQueueWorker` validates it
 * again when it claims the job (see {@link SchemaJobKindOptions}). To name
 * a result type then, pass the schema's type first:
 * `defineJob<typeof schema, { width: number }>("resize", { schema })`.
 *
 * @example
 * ```ts
 * interface SendInvoice { invoiceId: number }
 * export const SendInvoice = defineJob<SendInvoice>("send-invoice", { maxAttempts: 10, timeoutMs: 30_000 });
 *
 * await client.enqueue(SendInvoice, { invoiceId: 812 }); // checked by the compiler
 *
 * const ChargeCard = defineJob<ChargeCard>("charge-card", { maxPayloadBytes: 4_096, secretFields: ["card.number"] });
 * const Refund = defineJob<Refund>("refund", { maxAttempts: 5, deadLetterQueue: "refund-dead" }); // dead refunds are copied there
 * const Resize = defineJob<{ imageId: number }, { width: number }>("resize"); // waitFor resolves to { width: number }
 *
 * const Welcome = defineJob("send-welcome", { schema: z.object({ email: z.email() }) });
 * await client.enqueue(Welcome, { email: "nope" }); // PayloadSchemaError: payload.email: Invalid email address
 * ```
 */
export function defineJob<S extends PayloadSchema, R = unknown>(
  name: string,
  options: SchemaJobKindOptions<S>,
): SchemaJobDefinition<StandardSchemaV1.InferInput<S>, R, StandardSchemaV1.InferOutput<S>>;
export function defineJob<T, R = unknown>(name: string, options?: JobKindOptions): JobDefinition<T, R>;
export function defineJob(name: string, options: JobKindOptions & { readonly schema?: unknown } = {}): JobDefinition<unknown> {
  assertQueueName(name);
  if (typeof options !== "object" || options === null) {
    throw new ConfigError("defaults", "must be an object");
  }
  rejectUnknownOptions("defaults", options, JOB_KIND_KEYS);
  if (options.schema !== undefined && !isStandardSchema(options.schema)) {
    throw new ConfigError("schema", "must be a Standard Schema validator (zod, valibot, arktype …): an object with a `~standard` property of version 1");
  }
  return Object.freeze({
    name,
    defaults: Object.freeze(resolveJobDefaults(options)),
    maxPayloadBytes: integerOption("maxPayloadBytes", options.maxPayloadBytes ?? DEFAULT_MAX_PAYLOAD_BYTES, 2, MAX_PAYLOAD_BYTES_LIMIT),
    secretFields: resolveSecretFields(options.secretFields),
    ...(options.deadLetterQueue === undefined ? {} : { deadLetterQueue: checkDeadLetterQueue(name, options.deadLetterQueue) }),
    ...(options.schema === undefined ? {} : { schema: options.schema }),
  });
}

/** Validates job defaults (also used for enqueue overrides); messages name the option. */
export function resolveJobDefaults(input: Partial<JobDefaults>, base: JobDefaults = DEFAULT_JOB_DEFAULTS): JobDefaults {
  const maxAttempts = integerOption("maxAttempts", input.maxAttempts ?? base.maxAttempts, 1, MAX_ATTEMPTS);
  const timeoutInput = input.timeoutMs === undefined ? base.timeoutMs : input.timeoutMs;
  const timeoutMs = timeoutInput === null ? null : integerOption("timeoutMs", timeoutInput, 1, MAX_TIMEOUT_MS);
  const priority = integerOption("priority", input.priority ?? base.priority, MIN_PRIORITY, MAX_PRIORITY);
  return { maxAttempts, timeoutMs, priority };
}
