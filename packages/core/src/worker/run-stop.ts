import type { RunOptions } from "./run-options";
import type { StopReason } from "./run-summary";

/**
 * When a run stops claiming: its `signal` aborts or `maxRuntimeMs` passes
 * (a timer, and a `deadline` no claim reaches past). Whichever comes first
 * aborts {@link signal} with its {@link StopReason}; the other budgets
 * (`maxJobs`, a drained queue) end the claim loop themselves.
 *
 * @example
 * ```ts
 * const stop = new RunStop(runOptions, clock.now(), () => nudge.wake());
 * if (stop.signal.aborted) return stop.reason;
 * stop.dispose(); // once the shutdown no longer waits on it
 * ```
 */
export class RunStop {
  readonly #controller = new AbortController();
  readonly #given: AbortSignal | undefined;
  readonly #onGivenAbort = (): void => this.#controller.abort("signal" satisfies StopReason);
  readonly #timer: ReturnType<typeof setTimeout> | undefined;
  /** The local time after which no claim goes out, when the run has a `maxRuntimeMs`. */
  readonly deadline: number | undefined;

  /** `onStop` is called once, when the run is told to stop (it wakes the claim loop wherever it waits). */
  constructor(runOptions: Pick<RunOptions, "signal" | "maxRuntimeMs">, startedAt: number, onStop: () => void) {
    this.#controller.signal.addEventListener("abort", onStop, { once: true });
    this.#given = runOptions.signal;
    this.#given?.addEventListener("abort", this.#onGivenAbort, { once: true });
    if (this.#given?.aborted) this.#onGivenAbort();
    const { maxRuntimeMs } = runOptions;
    this.deadline = maxRuntimeMs === undefined ? undefined : startedAt + maxRuntimeMs;
    this.#timer = maxRuntimeMs === undefined ? undefined : setTimeout(() => this.#controller.abort("max-runtime" satisfies StopReason), maxRuntimeMs);
  }

  /** Aborts when the run is told to stop, with its {@link StopReason}. */
  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  /** Why the run was told to stop (once {@link signal} has aborted). */
  get reason(): StopReason {
    return this.#controller.signal.reason as StopReason;
  }

  /** Clears the timer and stops listening to the run's `signal`. */
  dispose(): void {
    clearTimeout(this.#timer);
    this.#given?.removeEventListener("abort", this.#onGivenAbort);
  }
}
