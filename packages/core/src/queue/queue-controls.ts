import type { ClaimedJob } from "../job/job-record";

/**
 * At most `limit` job starts per `periodMs`, across every worker of the
 * queue. Starts are spread out: a burst takes at most a tenth of a
 * second's worth (at least one job), then jobs start at the steady pace.
 */
export interface RateLimit {
  readonly limit: number;
  readonly periodMs: number;
}

/**
 * What an operator has set on a queue, as every worker applies it: a
 * paused queue's claims take nothing (running jobs finish, enqueue still
 * works); `maxRunning` caps the queue's running jobs across all processes;
 * `rateLimit` caps its starts per period; `retention` is read by the
 * retention pruner.
 *
 * @example
 * ```ts
 * const controls: QueueControls = {
 *   queue: "send-invoice-email", paused: false, maxRunning: 3, maxRunningPerGroup: null, rateLimit: { limit: 100, periodMs: 60_000 },
 *   retention: { succeededDays: null, deadDays: 90, cancelledDays: null }, updatedAt: new Date(),
 * };
 * ```
 */
export interface QueueControls {
  readonly queue: string;
  readonly paused: boolean;
  /** `null`: no cap. */
  readonly maxRunning: number | null;
  /** At most this many jobs of one group running at once, across every worker (see `EnqueueOptions.group`); `null`: no cap. */
  readonly maxRunningPerGroup: number | null;
  /** `null`: no limit. */
  readonly rateLimit: RateLimit | null;
  /** How long the queue keeps its finished jobs, where it differs from the global retention. */
  readonly retention: QueueRetention;
  readonly updatedAt: Date;
}

/**
 * How many days a queue keeps its finished jobs, per state, in place of
 * the retention pruner's global setting (`RetentionOptions`); `null` keeps
 * the global one (for cancelled jobs, the global `succeededDays`). `0`
 * deletes them at the next pass.
 *
 * @example
 * ```ts
 * await admin.retain("payments", { deadDays: 365, succeededDays: 90 }); // keep a payment's history longer than the rest
 * ```
 */
export interface QueueRetention {
  readonly succeededDays: number | null;
  readonly deadDays: number | null;
  readonly cancelledDays: number | null;
}

/** A change of a queue's retention: fields left out keep their value; `null` goes back to the global setting. */
export type QueueRetentionChange = Partial<QueueRetention>;

/** A change of a queue's controls: fields left out keep their value; `null` removes a cap or a limit. */
export interface QueueControlsChange {
  readonly paused?: boolean;
  readonly maxRunning?: number | null;
  readonly maxRunningPerGroup?: number | null;
  readonly rateLimit?: RateLimit | null;
  readonly retention?: QueueRetentionChange;
}

/**
 * Why a claim took fewer jobs than it asked for, when a control of the
 * queue held it back: `paused`, or a cap or limit that lets more start
 * after `retryAfterMs` at the earliest.
 */
export interface ClaimHold {
  readonly paused: boolean;
  /** When asking again may give more (a cap or a rate limit held the claim back); `null` otherwise. */
  readonly retryAfterMs: number | null;
}

/**
 * What a claim returns: the jobs, and, when a control of the queue held
 * the claim back, why (`hold`). A store without controls returns a plain
 * array.
 *
 * @example
 * ```ts
 * const jobs = await store.claimBatch({ queue, workerId, limit: 10, leaseMs: 60_000 });
 * if (jobs.hold?.paused) console.log(`${queue} is paused`);
 * ```
 */
export type ClaimedBatch = readonly ClaimedJob[] & { readonly hold?: ClaimHold };
