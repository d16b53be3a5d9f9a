import { ConfigError } from "../errors/config-errors";
import type { NewJob, SerialOnDead, UniqueWindow } from "../store/job-store";
import type { JobDefinition } from "./job-definition";
import { serializePayload } from "./serialize-payload";
import { DEFAULT_MAX_PAYLOAD_BYTES } from "../limits";
import type { JsonObject } from "./json-types";
import { serializeMeta } from "./job-meta";
import { withDeadLetterQueue } from "./dead-letter";
import { rejectUnknownOptions } from "../validation/option-checks";

/**
 * Per-job options of `enqueue`. Anything left out comes from the job kind's defaults.
 *
 * @example
 * ```ts
 * await client.enqueue(SendInvoice, { invoiceId: 812 }, { delayMs: 60_000, dedupeKey: "invoice:812" });
 * ```
 */
export interface EnqueueOptions<Tx = unknown> {
  /** Run at this instant (on the database's clock). */
  readonly runAt?: Date;
  /** Run this many ms from now (added to `runAt` when both are given). */
  readonly delayMs?: number;
  readonly priority?: number;
  readonly maxAttempts?: number;
  /** Per-attempt time limit in ms, or `null` for none. */
  readonly timeoutMs?: number | null;
  /** While a job of this queue with this key is active, enqueue returns that job instead (see `dedupe`). */
  readonly dedupeKey?: string;
  /**
   * What an enqueue does when an active job holds its `dedupeKey`:
   * - `"keep"` (default): nothing; the result names the existing job.
   * - `"replace"`: if that job has not started (`queued`), it takes this
   *   enqueue's payload, run time, priority, attempts, timeout and meta;
   *   a job that is running or waiting for a retry is kept as it is.
   * - `"debounce"`: `replace`, with a `delayMs` or `runAt` required: the job
   *   runs once, that long after the last enqueue of its key.
   *
   * With `replace` or `debounce`, a holder that has started (`running`, or
   * `failed` and waiting for its retry) gives the key up to one follow-up
   * job with this enqueue's fields: later enqueues replace the follow-up
   * while it waits, so a burst during a run leaves exactly one follow-up,
   * with the newest payload.
   *
   * Safe under concurrent enqueues: the key's unique index makes them take
   * turns, and the last to commit wins.
   */
  readonly dedupe?: DedupeMode;
  /**
   * At most one job of this queue per `key` for `forMs` after the first
   * enqueue of the key, whatever becomes of that job: an enqueue within
   * the window returns the first job (`duplicate: true`), even when it has
   * finished, failed or been cancelled. Unlike `dedupeKey`, which holds only
   * while the job is active. Not together with `dedupeKey`; not in
   * `enqueueMany`.
   *
   * @example
   * ```ts
   * await client.enqueue(SendDigest, { userId: 7 }, { unique: { key: "digest:7", forMs: 3_600_000 } }); // at most once an hour
   * ```
   */
  readonly unique?: UniqueWindow;
  /**
   * No attempt starts after this instant: a job still waiting then is
   * cancelled without running, with `error_code` `STINT_EXPIRED`. Not
   * together with `expireInMs`.
   */
  readonly startBy?: Date;
  /** No attempt starts later than this many ms after the job's run time (see `startBy`). */
  readonly expireInMs?: number;
  /**
   * The job's group: a tenant, a customer, an account. Claims of a queue
   * with groups take turns among the groups that have due jobs, least
   * recently served first, so one group's backlog cannot starve another's;
   * the queue's `maxRunningPerGroup` caps how many of one group run at once,
   * across every process. Jobs without a group take one turn together.
   * Not together with `serialKey`.
   *
   * @example
   * ```ts
   * await client.enqueue(SyncMailbox, { mailboxId: 7 }, { group: "tenant:acme" });
   * ```
   */
  readonly group?: string;
  /**
   * Jobs of the queue that share this key run one at a time, in enqueue
   * order, across every process: the next starts once the one before it has
   * succeeded (or been cancelled). One that fails holds the line through its
   * retries; one that dies holds it too, until it is retried or the line is
   * released (see `serialOnDead`). A serial key takes its turn among the
   * queue's groups. Not together with `group`; the order ignores `priority`.
   *
   * @example
   * ```ts
   * await client.enqueue(PostLedgerEntry, { accountId: 42, cents: -500 }, { serialKey: "account:42" });
   * ```
   */
  readonly serialKey?: string;
  /** With `serialKey`: a job that dies `"hold"`s its line (the default) or `"release"`s it to the next job. */
  readonly serialOnDead?: SerialOnDead;
  /**
   * A small JSON object kept with the job and handed to every attempt as
   * `ctx.meta` (a tenant, a request id, who asked for it), at most
   * `MAX_META_BYTES` (8 KiB) of JSON. Keys starting with `stint.` and
   * `traceparent`/`tracestate` may be written by stint itself.
   */
  readonly meta?: JsonObject;
  /**
   * The caller's transaction: the job exists if and only if it commits.
   * What the store accepts is the store's to say; the PostgreSQL store
   * takes a Kysely `Transaction`, a pg `Client` or `PoolClient` inside
   * `BEGIN`, a Drizzle transaction (`drizzle-orm/node-postgres`) or a knex
   * transaction, and refuses anything else with a `ConfigError`.
   */
  readonly transaction?: Tx;
}

/** See {@link EnqueueOptions.dedupe}. */
export type DedupeMode = "keep" | "replace" | "debounce";

const DEDUPE_MODES: readonly DedupeMode[] = ["keep", "replace", "debounce"];

const ENQUEUE_KEYS = [
  "runAt",
  "delayMs",
  "priority",
  "maxAttempts",
  "timeoutMs",
  "dedupeKey",
  "dedupe",
  "unique",
  "startBy",
  "expireInMs",
  "group",
  "serialKey",
  "serialOnDead",
  "meta",
  "transaction",
];

/**
 * Builds the row to insert from a job kind, a payload and options: the
 * kind's defaults under the options, the payload serialised within the
 * kind's `maxPayloadBytes` (and `meta`, see `serializeMeta`, naming the
 * kind's `deadLetterQueue` when it has one), the dedupe
 * mode resolved. Throws a `ConfigError` for an unknown option or a dedupe
 * mode its options do not allow, a `PayloadError` for the payload. The
 * values of the other options (priority, attempts, time limit, run time,
 * delay, dedupe key, unique window, expiry) are checked once, by the store the job is handed to
 * (see `CheckedJobStore`), with the same errors; nothing is written then.
 */
export function buildNewJob<T>(definition: JobDefinition<T, unknown, any>, payload: T, options: EnqueueOptions = {}): NewJob {
  rejectUnknownOptions("enqueue", options, ENQUEUE_KEYS);
  const { defaults } = definition;
  const delayMs = options.delayMs ?? 0;
  const dedupeKey = options.dedupeKey ?? null;
  const onDuplicate = dedupeModeOf(options, dedupeKey, delayMs);
  return {
    queue: definition.name,
    payloadJson: serializePayload(payload, definition.maxPayloadBytes ?? DEFAULT_MAX_PAYLOAD_BYTES, definition.name),
    priority: options.priority ?? defaults.priority,
    maxAttempts: options.maxAttempts ?? defaults.maxAttempts,
    timeoutMs: options.timeoutMs === undefined ? defaults.timeoutMs : options.timeoutMs,
    runAt: options.runAt ?? null,
    delayMs,
    dedupeKey,
    metaJson: serializeMeta(withDeadLetterQueue(options.meta, definition.deadLetterQueue)),
    ...(onDuplicate === "keep" ? {} : { onDuplicate }),
    ...(options.unique === undefined ? {} : { unique: options.unique }),
    ...(options.startBy === undefined ? {} : { startBy: options.startBy }),
    ...(options.expireInMs === undefined ? {} : { expireInMs: options.expireInMs }),
    ...groupOf(options),
  };
}

/** The `groupKey` and `serial` of a job from its `group`, `serialKey` and `serialOnDead` options. */
function groupOf(options: EnqueueOptions): Pick<NewJob, "groupKey" | "serial"> {
  const { group, serialKey, serialOnDead } = options;
  if (group !== undefined && serialKey !== undefined)
    throw new ConfigError("serialKey", "takes no group beside it: a serial key takes its own turn among the queue's groups");
  if (serialOnDead !== undefined && serialKey === undefined) throw new ConfigError("serialOnDead", "needs a serialKey");
  if (serialKey !== undefined) return { groupKey: serialKey, serial: serialOnDead ?? "hold" };
  return group === undefined ? {} : { groupKey: group };
}

function dedupeModeOf(options: EnqueueOptions, dedupeKey: string | null, delayMs: number): "keep" | "replace" {
  const mode = options.dedupe ?? "keep";
  if (!DEDUPE_MODES.includes(mode)) throw new ConfigError("dedupe", `must be one of ${DEDUPE_MODES.join(", ")}, got ${JSON.stringify(mode)}`);
  if (mode !== "keep" && dedupeKey === null) throw new ConfigError("dedupe", `"${mode}" needs a dedupeKey`);
  if (mode === "debounce" && delayMs === 0 && options.runAt === undefined)
    throw new ConfigError("dedupe", '"debounce" needs a delayMs (or a runAt): the job runs that long after the last enqueue');
  return mode === "keep" ? "keep" : "replace";
}
