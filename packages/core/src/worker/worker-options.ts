import { ConfigError } from "../errors/config-errors";
import { resolveBackoff, type BackoffOptions } from "../policy/backoff";
import { systemClock, type Clock } from "../time/clock";
import { integerOption, rejectUnknownOptions } from "../validation/option-checks";
import { MAX_LEASE_MS, MAX_WORKER_ID_LENGTH } from "../limits";

/**
 * How a worker runs its queue. Every field is optional; {@link resolveWorkerOptions}
 * fills in defaults, validates and freezes them.
 *
 * @example
 * ```ts
 * super(store, log, { concurrency: 5, leaseMs: 120_000, backoff: { baseMs: 2_000 } });
 * ```
 */
export interface WorkerOptions {
  /** Handlers running at once in this worker. Default 5; 1 to 1,000. */
  readonly concurrency?: number;
  /**
   * Jobs claimed ahead of free handler slots and kept, under lease, in a
   * local buffer, so a slot that frees up starts the next job without a
   * round trip to the database. A claim takes up to `concurrency + prefetch`
   * jobs; the buffer is refilled when it is down to half of `prefetch`.
   * Buffered jobs are `running` in the database (owned by this worker, with
   * `started_at` set at the claim) and go back to the queue without spending
   * their attempt at shutdown.
   *
   * `"auto"` (the default) holds about 50 ms of work at the pace the
   * handlers have been finishing jobs, at most 500 (or `concurrency`, when
   * that is more): fast jobs get large claims, which cost the database far
   * less per job, and slow jobs are not hoarded while another worker idles.
   * A number holds exactly that many ahead; `0` claims only for free slots.
   * 0 to 10,000.
   */
  readonly prefetch?: number | "auto";
  /**
   * How long a claim is owned before another worker may take the job, in ms.
   * A heartbeat every `leaseMs / 3` extends it while the job runs; one that
   * gets no answer within `leaseMs / 6` is given up and sent again sooner.
   * The lease is also a deadline for the handler: when no renewal has been
   * confirmed for `leaseMs` minus a safety margin (a tenth of the lease, at
   * least 100 ms and at most a quarter of it), the handler's signal aborts
   * with `LeaseLostError`, before another worker can take the job over.
   * Default 60,000; at least 200.
   */
  readonly leaseMs?: number;
  /**
   * Wait for each claim to reach disk before running its jobs. Default false:
   * a claim commits without waiting for its WAL flush, which is most of a
   * claim's time on an idle queue, on every job's path from enqueue to
   * handler start (see docs/benchmarks.md, Figures behind the code). A database crash in the moment
   * before the flush can undo such a claim — the job is queued again, attempt
   * uncounted — so the worker counts a claim as durable only once one of its
   * own later writes has committed, and stops the handlers of any other claim
   * as soon as it sees its database connection fail. A handler that ignores
   * its `AbortSignal` can then still overlap with another worker's run of the
   * job, as with any lost lease. Set true for a job whose runs must never
   * overlap, even across a crash of the database. Either way, no claim goes
   * out while a write of the worker is unanswered past the heartbeat
   * timeout (a synchronous standby that does not answer), and after a
   * failed write claims wait for their flush until a write is confirmed.
   */
  readonly durableClaims?: boolean;
  /**
   * Jobs handed to `processBatch` at once. Default 1: each job runs alone
   * through `processItem`. Above 1, a handler slot takes up to this many
   * claimed jobs and calls `processBatch` with them; `concurrency` then
   * counts batches. Each job still has its own attempt, outcome and
   * history; a batch holds its jobs under one lease. 1 to 1,000.
   */
  readonly batchSize?: number;
  /**
   * How long a batch smaller than `batchSize` waits for more claimed jobs
   * before it starts anyway, in ms. Default 0: a free slot starts with
   * whatever is claimed. 0 to 60,000.
   */
  readonly batchWaitMs?: number;
  /** Retry delays; see `BackoffOptions`. */
  readonly backoff?: Partial<BackoffOptions>;
  /** On shutdown, how long in-flight jobs may still finish before they are given back. Default 30,000. */
  readonly shutdownTimeoutMs?: number;
  /**
   * How long one `onDead` call may take, in ms: then its `ctx.signal`
   * aborts, the worker stops waiting for it (it is logged as failed) and
   * records the hook as done. A death's hook is claimed for this long plus
   * 10 s, so no other worker calls it meanwhile. Default 10,000; 1 to 3,600,000.
   */
  readonly onDeadTimeoutMs?: number;
  /**
   * Identity of this worker incarnation, recorded as the owner of the jobs it
   * claims. Default: the process's random token drawn at start-up (with
   * `.n` for a second worker in the process), e.g. `9b1e03aa`; the start
   * line logs it with the host and pid.
   * Must be unique among live workers.
   */
  readonly workerId?: string;
  /** Time source for durations and timers (tests inject a fake). */
  readonly clock?: Clock;
  /** Random numbers in [0, 1) for jitter (tests inject a fixed one). */
  readonly random?: () => number;
}

/** Worker options after defaults and validation. */
export interface ResolvedWorkerOptions {
  readonly concurrency: number;
  /** The most jobs held ahead of the slots. */
  readonly prefetch: number;
  /** Whether the buffer follows the handlers' pace (up to `prefetch`) or always holds `prefetch`. */
  readonly adaptivePrefetch: boolean;
  readonly leaseMs: number;
  readonly heartbeatIntervalMs: number;
  /** How long a heartbeat may go unanswered before it is given up. */
  readonly heartbeatTimeoutMs: number;
  /** How long before the database lease runs out the worker stops the handler (see `leaseMs`). */
  readonly leaseMarginMs: number;
  readonly durableClaims: boolean;
  /** Jobs per `processBatch` call; 1: no batches. */
  readonly batchSize: number;
  readonly batchWaitMs: number;
  readonly backoff: BackoffOptions;
  readonly shutdownTimeoutMs: number;
  readonly onDeadTimeoutMs: number;
  readonly workerId: string | undefined;
  readonly clock: Clock;
  readonly random: () => number;
}

/** The range and default of each numeric worker option; `resolveWorkerOptions` and the STINT_* settings check against these. */
export const WORKER_OPTION_LIMITS = Object.freeze({
  concurrency: Object.freeze({ min: 1, max: 1_000, default: 5 }),
  prefetch: Object.freeze({ min: 0, max: 10_000 }),
  leaseMs: Object.freeze({ min: 200, max: MAX_LEASE_MS, default: 60_000 }),
  shutdownTimeoutMs: Object.freeze({ min: 0, max: 86_400_000, default: 30_000 }),
  onDeadTimeoutMs: Object.freeze({ min: 1, max: 3_600_000, default: 10_000 }),
  batchSize: Object.freeze({ min: 1, max: 1_000, default: 1 }),
  batchWaitMs: Object.freeze({ min: 0, max: 60_000, default: 0 }),
});

const KNOWN = [
  "concurrency",
  "prefetch",
  "leaseMs",
  "durableClaims",
  "batchSize",
  "batchWaitMs",
  "backoff",
  "shutdownTimeoutMs",
  "onDeadTimeoutMs",
  "workerId",
  "clock",
  "random",
];

/** Fills in defaults, validates (messages name the option) and freezes worker options. */
export function resolveWorkerOptions(input: WorkerOptions = {}): ResolvedWorkerOptions {
  if (typeof input !== "object" || input === null) throw new ConfigError("options", "must be an object");
  rejectUnknownOptions("options", input, KNOWN);
  const leaseMs = limited("leaseMs", input.leaseMs);
  if (input.workerId !== undefined && (typeof input.workerId !== "string" || input.workerId.length === 0 || input.workerId.length > MAX_WORKER_ID_LENGTH)) {
    throw new ConfigError("workerId", `must be a non-empty string of at most ${MAX_WORKER_ID_LENGTH} characters`);
  }
  if (input.durableClaims !== undefined && typeof input.durableClaims !== "boolean") throw new ConfigError("durableClaims", "must be true or false");
  if (input.random !== undefined && typeof input.random !== "function") {
    throw new ConfigError("random", "must be a function returning a number in [0, 1)");
  }
  const concurrency = limited("concurrency", input.concurrency);
  return Object.freeze({
    concurrency,
    ...resolvePrefetch(input.prefetch, concurrency),
    leaseMs,
    heartbeatIntervalMs: Math.max(50, Math.floor(leaseMs / 3)),
    heartbeatTimeoutMs: Math.max(25, Math.floor(leaseMs / 6)),
    leaseMarginMs: leaseSafetyMargin(leaseMs),
    durableClaims: input.durableClaims ?? false,
    batchSize: limited("batchSize", input.batchSize),
    batchWaitMs: limited("batchWaitMs", input.batchWaitMs),
    backoff: resolveBackoff(input.backoff),
    shutdownTimeoutMs: limited("shutdownTimeoutMs", input.shutdownTimeoutMs),
    onDeadTimeoutMs: limited("onDeadTimeoutMs", input.onDeadTimeoutMs),
    workerId: input.workerId,
    clock: input.clock ?? systemClock,
    random: input.random ?? Math.random,
  });
}

function limited(option: Exclude<keyof typeof WORKER_OPTION_LIMITS, "prefetch">, value: number | undefined): number {
  const limits = WORKER_OPTION_LIMITS[option];
  return integerOption(option, value ?? limits.default, limits.min, limits.max);
}

/** Most jobs an adaptive buffer holds ahead (unless `concurrency` is larger). */
const AUTO_PREFETCH_MAX = 500;

function resolvePrefetch(prefetch: number | "auto" | undefined, concurrency: number): { prefetch: number; adaptivePrefetch: boolean } {
  if (prefetch === undefined || prefetch === "auto") return { prefetch: Math.max(AUTO_PREFETCH_MAX, concurrency), adaptivePrefetch: true };
  const { min, max } = WORKER_OPTION_LIMITS.prefetch;
  return { prefetch: integerOption("prefetch", prefetch, min, max), adaptivePrefetch: false };
}

/**
 * The part of a lease the worker does not count on: a tenth of it, at least
 * 100 ms, at most a quarter. It covers the time between sending a claim or a
 * renewal and the database applying it, and timer delays.
 */
export function leaseSafetyMargin(leaseMs: number): number {
  return Math.min(Math.max(Math.round(leaseMs / 10), 100), Math.round(leaseMs / 4));
}
