import type { JobState } from "../job/job-state";
import type { MaintenanceStore } from "./maintenance-store";
import type { OperatorStore } from "./operator-store";
import type { ProducerStore } from "./producer-store";
import type { WorkerStore } from "./worker-store";
import type { WorkflowStore } from "./workflow-store";

/**
 * A job ready to be written: what `enqueue` and `enqueueMany` take.
 * The payload is already serialised JSON text (see `serializePayload`).
 */
export interface NewJob {
  readonly queue: string;
  /** The payload as JSON text. */
  readonly payloadJson: string;
  readonly priority: number;
  readonly maxAttempts: number;
  /** Per-attempt time limit in milliseconds, or `null`. */
  readonly timeoutMs: number | null;
  /** Run at this instant; `null` means "now" on the database clock. */
  readonly runAt: Date | null;
  /** Added to the database's `now()` (or to `runAt`) to get `run_at`. */
  readonly delayMs: number;
  /** Unique among the queue's active jobs, or `null`. */
  readonly dedupeKey: string | null;
  /** The job's `meta` as JSON text of an object (see `serializeMeta`); `null` or left out for none. */
  readonly metaJson?: string | null;
  /**
   * When an active job holds the dedupe key: `keep` it (the default), or
   * `replace` its payload, run time, priority, attempts, timeout and meta
   * with this job's, if it is still `queued` (one that started is kept).
   */
  readonly onDuplicate?: "keep" | "replace";
  /**
   * At most one job of the queue per `key` for `forMs` after the first
   * enqueue, whatever becomes of it: a later enqueue within the window
   * returns the first job, even when it has finished. `null` or left out
   * for none; never together with a `dedupeKey`.
   */
  readonly unique?: UniqueWindow | null;
  /** No attempt starts after this instant; `null` or left out for none (see `expireInMs`). */
  readonly startBy?: Date | null;
  /** No attempt starts later than this many ms after the job's `run_at`; `null` or left out for none. Never with `startBy`. */
  readonly expireInMs?: number | null;
  /**
   * The job's group (a tenant, a customer), or its serial key when `serial`
   * is set; `null` or left out for none. Claims of a queue with groups take
   * turns among them, and a queue's `maxRunningPerGroup` caps each.
   */
  readonly groupKey?: string | null;
  /**
   * Set when `groupKey` is a serial key: the key's jobs run one at a time,
   * in enqueue order. What the line does when one of them dies: `hold`
   * (nothing behind it runs until it is retried, or the line is released)
   * or `release` (the next one runs). `null` or left out: not serial.
   */
  readonly serial?: SerialOnDead | null;
}

/** What a serial line does when one of its jobs dies: see {@link NewJob.serial}. */
export type SerialOnDead = "hold" | "release";

/** A unique window: see {@link NewJob.unique}. */
export interface UniqueWindow {
  readonly key: string;
  readonly forMs: number;
}

/** What enqueue says about one job. */
export interface EnqueueResult {
  readonly id: string;
  /** True when an active job of the queue already held the dedupe key (or a job of the queue holds the unique window); `id` is that job's. */
  readonly duplicate: boolean;
  /** True when that job was `queued` and took this enqueue's payload and run time (`onDuplicate: "replace"`). */
  readonly replaced?: boolean;
}

/** Identifies one attempt of one job: the fence every write after a claim checks. */
export interface JobAttempt {
  readonly id: string;
  readonly attempt: number;
}

/** A successful attempt to record. */
export interface CompletedJob extends JobAttempt {
  /** The handler's return value as JSON text, or `null`. */
  readonly resultJson: string | null;
  readonly durationMs: number;
}

/** The error stored with a failed attempt. */
export interface JobFailure {
  /** Stack and causes, already capped (see `describeError`). */
  readonly message: string;
  /** A stable code such as `STINT_TIMEOUT`, or `null`. */
  readonly code: string | null;
  /**
   * The error's own one-line `Name: message` (see `errorSummary`) for the
   * attempt's history record; when left out, the first line of `message`.
   */
  readonly summary?: string;
}

/** An attempt that failed (or was snoozed or given back) and runs again later. */
export interface RetryingJob extends JobAttempt {
  /** Added to the database's `now()` to get the next `run_at`. */
  readonly delayMs: number;
  /** Stored as the job's error; `null` when nothing failed (the previous error is kept). */
  readonly failure: JobFailure | null;
  /** `false` gives the attempt back: `max_attempts` goes up by one. */
  readonly spendAttempt: boolean;
  /**
   * How the attempt ended, for its history record (see `listAttempts`);
   * `null` records nothing (an attempt given back before its handler
   * started). Left out: `"failed"` with a failure, nothing without one.
   */
  readonly outcome?: "failed" | "lease-lost" | "shutdown" | "snoozed" | null;
  /** How long the attempt ran, as the worker measured it; `null` or left out: the database clock's figure since the claim. */
  readonly durationMs?: number | null;
}

/** An attempt after which the job gives up. */
export interface DeadJob extends JobAttempt {
  readonly failure: JobFailure;
  /** How the attempt ended, for its history record: `"dead"` (the default) or `"lease-lost"` (it was the last attempt). */
  readonly outcome?: "dead" | "lease-lost";
  /** How long the attempt ran, as the worker measured it; `null` or left out: the database clock's figure since the claim. */
  readonly durationMs?: number | null;
  /**
   * Whether the job's meta names a dead-letter queue (see
   * `deadLetterTarget`), as the claim returned it: `false` lets a store
   * leave the copy out of the death's statement. Left out, the store finds
   * out itself. A worker knows: the key cannot change after the claim.
   */
  readonly deadLetter?: boolean;
}

/**
 * A handler's latest progress to store on its job (`ctx.progress`), fenced
 * like an outcome on id, owner and attempt.
 */
export interface ProgressWrite {
  readonly workerId: string;
  readonly job: JobAttempt;
  /** The value as JSON text (see `serializeProgress`). */
  readonly progressJson: string;
}

/**
 * A handler's `ctx.updateMeta` patch, merged (shallowly) into its job's
 * `meta`, fenced like an outcome on id, owner and attempt.
 */
export interface MetaUpdate {
  readonly workerId: string;
  readonly job: JobAttempt;
  /** The keys to set, as the JSON text of an object (see `serializeMeta`). */
  readonly patchJson: string;
}

/**
 * `ctx.log` lines to append to the running attempt's log, fenced like an
 * outcome on id, owner and attempt.
 */
export interface JobLogAppend {
  readonly workerId: string;
  readonly job: JobAttempt;
  /** Each line as JSON text (see `serializeLogLine`), oldest first: at most `MAX_JOB_LOG_LINES`. */
  readonly linesJson: readonly string[];
  /** Lines the worker already dropped before these (its buffer keeps the newest). */
  readonly droppedLines: number;
}

/**
 * The backend's transaction handed to `ctx.once` and `ctx.transaction`
 * callbacks: a Kysely `Transaction` for `@stint/postgres-driver`. Typed
 * loosely so a callback can declare the exact type it expects.
 */
export type StoreTransaction = any;

/** Per-queue figures for dashboards and the CLI. */
export interface QueueCounts {
  readonly queue: string;
  readonly counts: Readonly<Record<JobState, number>>;
  /** Jobs whose `run_at` has passed and that wait for a worker. */
  readonly due: number;
  /** Age in milliseconds of the oldest due job, or `null` when none is due (queue lag). */
  readonly oldestDueAgeMs: number | null;
  /** Jobs that succeeded within the last `completedSinceMs` (present only when asked for). */
  readonly completedSince?: number;
}

/**
 * What a metrics scrape reads of one queue: its waiting, running and dead
 * jobs (never the succeeded history), the jobs due now and the queue lag.
 *
 * @example
 * ```ts
 * const [invoices] = await store.readQueueGauges({ queues: ["send-invoice"] });
 * if ((invoices?.oldestDueAgeMs ?? 0) > 60_000) console.warn("send-invoice lags by over a minute");
 * ```
 */
export interface QueueGauges {
  readonly queue: string;
  /** Workflow steps waiting for the steps they depend on (never due). */
  readonly blocked: number;
  readonly queued: number;
  /** Failed attempts with a retry scheduled. */
  readonly failed: number;
  readonly running: number;
  readonly dead: number;
  /** Jobs `queued` or `failed` whose `run_at` has passed. */
  readonly due: number;
  /** Age in milliseconds of the oldest due job, or `null` when none is due. */
  readonly oldestDueAgeMs: number | null;
}

/**
 * The storage contract every backend implements. Core talks only to this
 * interface; `@stint/postgres-driver` implements it with Kysely and pg.
 * It is the sum of its callers' groups, each in its own interface:
 * {@link ProducerStore} (enqueues), {@link WorkerStore} (claims, leases,
 * outcomes), {@link OperatorStore} (reads and commands of the dashboard,
 * the CLI and `QueueAdmin`) and {@link MaintenanceStore} (rescue,
 * retention, readiness); code that makes one group's calls can ask for
 * that group alone.
 *
 * Every write after a claim is fenced on `id + workerId + attempt` and says
 * whether it applied: losing a lease is a result, not an exception.
 * Infrastructure failures reject with `InfrastructureError`.
 *
 * `Tx` is the backend's transaction type: pass one to `enqueue` and the job
 * exists if and only if that transaction commits.
 *
 * @example
 * ```ts
 * class MyStore implements JobStore<MyTransaction> { … } // every group's calls
 * ```
 */
export interface JobStore<Tx = unknown> extends ProducerStore<Tx>, WorkerStore, OperatorStore, MaintenanceStore, WorkflowStore<Tx> {}
