import type { Clock } from "../time/clock";

/** How much work the adaptive buffer holds ahead of the handlers, in ms at the measured pace. */
export const PREFETCH_AHEAD_MS = 50;
/** The pace is smoothed over about this long, so one slow or fast claim does not swing the buffer. */
const SMOOTHING_MS = 200;
/** Shorter intervals are folded into the next sample: too few jobs finish in them to measure a pace. */
const MIN_SAMPLE_MS = 2;

/**
 * Decides how many claimed jobs a worker keeps in its local buffer ahead of
 * its handler slots.
 *
 * A fixed size holds exactly that many. The adaptive size holds about
 * {@link PREFETCH_AHEAD_MS} of work at the pace handlers have been finishing
 * jobs (smoothed), up to `max`: fast jobs get large claims, which cost the
 * database far less per job than small ones, and slow jobs are not hoarded
 * by one worker while another sits idle. A buffer that ran dry makes the
 * pace look slower than the handlers could go, but never by more than the
 * claim's round trip, which is far shorter than the window: the size grows
 * back within a few claims.
 *
 * @example
 * ```ts
 * const sizer = PrefetchSizer.adaptive(500, systemClock);
 * sizer.finished(); // each time a handler finishes a job
 * const ahead = sizer.target(); // before each claim: 0 … 500
 * ```
 */
export class PrefetchSizer {
  readonly #max: number;
  readonly #clock: Clock | undefined;
  /** Jobs per ms, smoothed. */
  #pace = 0;
  #finishedSinceSample = 0;
  #sampledAt: number;

  private constructor(max: number, clock: Clock | undefined) {
    this.#max = max;
    this.#clock = clock;
    this.#sampledAt = clock?.now() ?? 0;
  }

  /** Always `size` jobs ahead (0: claim only for free slots). */
  static fixed(size: number): PrefetchSizer {
    return new PrefetchSizer(size, undefined);
  }

  /** About {@link PREFETCH_AHEAD_MS} of work ahead, at most `max` jobs. */
  static adaptive(max: number, clock: Clock): PrefetchSizer {
    return new PrefetchSizer(max, clock);
  }

  /** Counts `count` jobs (by default one) a handler finished. */
  finished(count = 1): void {
    this.#finishedSinceSample += count;
  }

  /** How many jobs to hold ahead of the slots now. */
  target(): number {
    const clock = this.#clock;
    if (clock === undefined) return this.#max;
    const now = clock.now();
    const elapsed = now - this.#sampledAt;
    if (elapsed >= MIN_SAMPLE_MS) {
      const pace = this.#finishedSinceSample / elapsed;
      this.#pace += (pace - this.#pace) * Math.min(1, elapsed / SMOOTHING_MS);
      this.#finishedSinceSample = 0;
      this.#sampledAt = now;
    }
    return Math.min(this.#max, Math.ceil(this.#pace * PREFETCH_AHEAD_MS));
  }
}
