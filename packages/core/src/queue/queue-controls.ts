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
 * `rateLimit` caps its starts per period.
 *
 * @example
 * ```ts
 * const controls: QueueControls = { queue: "send-invoice-email", paused: false, maxRunning: 3, rateLimit: { limit: 100, periodMs: 60_000 }, updatedAt: new Date() };
 * ```
 */
export interface QueueControls {
  readonly queue: string;
  readonly paused: boolean;
  /** `null`: no cap. */
  readonly maxRunning: number | null;
  /** `null`: no limit. */
  readonly rateLimit: RateLimit | null;
  readonly updatedAt: Date;
}

/** A change of a queue's controls: fields left out keep their value; `null` removes a cap or a limit. */
export interface QueueControlsChange {
  readonly paused?: boolean;
  readonly maxRunning?: number | null;
  readonly rateLimit?: RateLimit | null;
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
