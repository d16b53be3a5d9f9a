import { coerceError } from "../errors/coerce-error";
import type { Logger } from "../logging/logger";
import type { JobStore } from "../store/job-store";
import type { Clock } from "../time/clock";

/** Shortest time between two reads of the queue's controls on wake-ups that come while the buffer is full. */
const CONTROLS_READ_EVERY_MS = 50;

/** What {@link QueuePause} works with. */
export interface QueuePauseParts {
  readonly store: JobStore;
  readonly queue: string;
  readonly log: Logger;
  readonly clock: Clock;
  /** Hands the run's buffered attempts back to the queue: a paused queue's jobs must not start. */
  readonly giveBackBuffered: () => Promise<unknown>;
}

/**
 * How a run sees its queue paused. A claim says so itself; while the
 * buffer is full no claim goes out, so a wake-up from outside (a job
 * enqueued, a control changed) makes the run read the controls instead.
 * Either way the buffered jobs go back (they must not start) and running
 * ones finish; the pause is logged once, until a claim finds it over.
 *
 * @example
 * ```ts
 * const pause = new QueuePause({ store, queue, log, clock, giveBackBuffered });
 * pause.wokenFromOutside(); // from the wake-up source
 * if (pause.wokenSinceLastLook) await pause.readControls(); // while the buffer is full
 * ```
 */
export class QueuePause {
  readonly #parts: QueuePauseParts;
  /** Whether the last claim found the queue paused (logged once per pause). */
  #paused = false;
  /** A wake-up came from outside since the last look at the queue's controls. */
  #woken = false;
  /** When the controls were last read for a wake-up that came while no claim could be sent. */
  #controlsReadAt = -Infinity;

  constructor(parts: QueuePauseParts) {
    this.#parts = parts;
  }

  /** A wake-up came from outside: a pause may have begun. */
  wokenFromOutside(): void {
    this.#woken = true;
  }

  /** A claim is about to be sent: it looks at the controls itself. */
  claiming(): void {
    this.#woken = false;
  }

  /** A claim found the queue not paused. */
  claimFoundOpen(): void {
    this.#paused = false;
  }

  /** A claim found the queue paused: buffered jobs go back (they must not start), running ones finish. */
  async claimFoundPaused(): Promise<void> {
    const { queue, log, giveBackBuffered } = this.#parts;
    if (!this.#paused) log.info(`Queue ${queue} is paused: claiming nothing until it is resumed`, { queue });
    this.#paused = true;
    await giveBackBuffered();
  }

  /** Whether a wake-up came from outside since the last look at the controls (a claim's or {@link readControls}'). */
  get wokenSinceLastLook(): boolean {
    return this.#woken;
  }

  /**
   * For a wake-up from outside while no claim can go out (the buffer is
   * full): the queue may have been paused, so the controls are read (at
   * most every {@link CONTROLS_READ_EVERY_MS}) and a paused queue's
   * buffered jobs go back.
   */
  async readControls(): Promise<void> {
    const { store, clock, queue, log } = this.#parts;
    const now = clock.now();
    if (now - this.#controlsReadAt < CONTROLS_READ_EVERY_MS) return;
    this.#controlsReadAt = now;
    this.#woken = false;
    try {
      const controls = (await store.listQueueControls()).find((entry) => entry.queue === queue);
      if (controls?.paused === true) await this.claimFoundPaused();
    } catch (thrown) {
      log.debug(`Could not read the controls of ${queue}: ${coerceError(thrown).message}`, { queue });
    }
  }
}
