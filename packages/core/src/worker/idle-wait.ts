import type { Clock } from "../time/clock";
import type { WakeUp } from "./wake-up";

/** The reason an idle wait's timer is cancelled with (a reason of our own: no exception is built). */
const IDLE_OVER = "idle wait over";

/**
 * The claim loop's wait for something to do: a nudge (a slot freed up, a
 * job was recorded, a wake-up arrived, the run stopped) or, in an idle
 * wait, a timer as well. The timer is cancelled once the claim the nudge
 * leads to has started its jobs ({@link cancelTimer}), not at once:
 * aborting a signal dispatches an event, and even deferred with
 * `setImmediate` that lengthened the path from a wake-up to the claim's
 * send on a worker idle between jobs (see docs/benchmarks.md, Figures
 * behind the code).
 *
 * @example
 * ```ts
 * const waits = new IdleWait(nudge, clock);
 * await waits.idle(2_000); // a nudge or 2 s
 * waits.cancelTimer(); // once the claim it led to has started its jobs
 * ```
 */
export class IdleWait {
  readonly #nudge: WakeUp;
  readonly #clock: Clock;
  /** The timer of the last idle wait, until it is cancelled. */
  #timer: AbortController | undefined;

  constructor(nudge: WakeUp, clock: Clock) {
    this.#nudge = nudge;
    this.#clock = clock;
  }

  /** Waits for the next nudge, however long it takes. */
  untilNudged(): Promise<void> {
    return this.#nudge.wait();
  }

  /** Waits for the next nudge or `ms` passing, whichever comes first. */
  async idle(ms: number): Promise<void> {
    this.cancelTimer();
    const { woken, cancel } = this.#nudge.waiter();
    const timer = new AbortController();
    this.#timer = timer;
    await Promise.race([woken, this.#clock.sleep(ms, timer.signal)]);
    cancel();
  }

  /** Cancels the timer of the last idle wait, if it may still be pending. */
  cancelTimer(): void {
    const timer = this.#timer;
    this.#timer = undefined;
    timer?.abort(IDLE_OVER);
  }
}
