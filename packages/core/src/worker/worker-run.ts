import { coerceError } from "../errors/coerce-error";
import { AttemptPipeline, type AttemptPipelineParts } from "./attempt-pipeline";
import { ClaimLoop, type ClaimLoopEnd } from "./claim-loop";
import type { DrainGroupMember } from "./drain-group";
import { HandlerSlots } from "./handler-slots";
import { IdleWait } from "./idle-wait";
import { PrefetchSizer } from "./prefetch-sizer";
import { QueuePause } from "./queue-pause";
import type { RunOptions } from "./run-options";
import { logRunProgress } from "./run-progress-log";
import { shutDownRun } from "./run-shutdown";
import { RunStop } from "./run-stop";
import { failureStopReason, type RunSummary } from "./run-summary";
import { WakeUp } from "./wake-up";

/**
 * One run of a worker over its queue. It claims up to `concurrency +
 * prefetch` jobs in one statement (the prefetch follows the handlers' pace;
 * see {@link PrefetchSizer}), keeps those it cannot start yet in a local
 * buffer under lease (heartbeats extend them too), starts a buffered job the
 * moment a handler slot frees up, and claims again while the buffer still
 * holds half the prefetch, so slots do not wait for a round trip. It
 * stops when no due job is left (drain mode; loop mode waits for a wake-up
 * or the next poll instead), a budget is spent or its signal aborts; buffered
 * jobs then go back to the queue at once without spending their attempt.
 *
 * The parts, each in a file of its own: the attempt wiring
 * ({@link AttemptPipeline}), the buffer and the handler slots
 * ({@link HandlerSlots}), the claim loop ({@link ClaimLoop}), how the run
 * sees its queue paused ({@link QueuePause}), when it stops ({@link RunStop})
 * and how ({@link shutDownRun}).
 */
export class WorkerRun<T> {
  readonly #parts: AttemptPipelineParts<T>;
  readonly #pipeline: AttemptPipeline<T>;
  /** Woken when a slot frees up, a job is recorded, a wake-up arrives or the run is told to stop. */
  readonly #nudge = new WakeUp();
  readonly #prefetch: PrefetchSizer;
  readonly #slots: HandlerSlots<T>;
  readonly #pause: QueuePause;
  /** The run's place in its drain group, while it runs in one. */
  #together: DrainGroupMember | undefined;

  constructor(parts: AttemptPipelineParts<T>) {
    this.#parts = parts;
    const { store, options, queue, log } = parts;
    this.#pipeline = new AttemptPipeline(parts);
    this.#prefetch = options.adaptivePrefetch ? PrefetchSizer.adaptive(options.prefetch, options.clock) : PrefetchSizer.fixed(options.prefetch);
    const { batchSize, batchWaitMs, clock } = options;
    const batches =
      batchSize > 1 ? { batches: { executor: this.#pipeline.batches, size: batchSize, waitMs: batchWaitMs, clock, leases: this.#pipeline.leases } } : {};
    const slots = new HandlerSlots({
      executor: this.#pipeline.executor,
      concurrency: options.concurrency,
      prefetch: this.#prefetch,
      nudge: this.#nudge,
      ...batches,
      onRecorded: () => this.#together?.recorded(),
    });
    this.#slots = slots;
    this.#pause = new QueuePause({ store, queue, log, clock: options.clock, giveBackBuffered: () => slots.giveBackBuffered() });
  }

  /** Runs until drained, a budget is spent or the signal aborts; never rejects. */
  async run(runOptions: RunOptions): Promise<RunSummary> {
    const { options, queue, workerId, log } = this.#parts;
    const { clock, leaseMs } = options;
    const slots = this.#slots;
    const pipeline = this.#pipeline;
    const started = clock.now();
    const stop = new RunStop(runOptions, started, () => this.#nudge.wake());
    // The first claim does not wait for the wake-up connection: it goes out while that connects.
    const subscription = this.#subscribe(runOptions);
    pipeline.start();
    const runOver = new AbortController();
    const progress = logRunProgress({ clock, log, queue, slots }, runOver.signal);
    this.#together = runOptions.drainGroup?.join(() => this.#nudge.wake());
    const { error, ...end } = await this.#claimUntilStopped(runOptions, stop);
    const wakeups = await subscription;
    try {
      await shutDownRun(
        { slots, pipeline, clock, leaseMs },
        { ...end, stop, shutdownTimeoutMs: runOptions.shutdownTimeoutMs ?? options.shutdownTimeoutMs, ...(wakeups === undefined ? {} : { wakeups }) },
      );
    } finally {
      // Its outcomes are recorded: the rest of its drain group no longer waits for it.
      this.#together?.leave();
      this.#together = undefined;
    }
    runOver.abort();
    await progress;
    return Object.freeze({
      queue,
      workerId,
      ...slots.counts(),
      durationMs: clock.now() - started,
      stoppedBecause: end.stoppedBecause,
      ...(error === undefined ? {} : { error }),
    });
  }

  /** Runs the claim loop; a claim that failed for good ends it with `infrastructure` or `config` and the error's message. */
  async #claimUntilStopped(runOptions: RunOptions, stop: RunStop): Promise<ClaimLoopEnd & { readonly error?: string }> {
    const waits = new IdleWait(this.#nudge, this.#parts.options.clock);
    const loop = new ClaimLoop({
      ...this.#parts,
      ...{ pipeline: this.#pipeline, slots: this.#slots, pause: this.#pause, prefetch: this.#prefetch, waits, stop, runOptions },
      ...(this.#together === undefined ? {} : { together: this.#together }),
    });
    try {
      return await loop.run();
    } catch (thrown) {
      return { stoppedBecause: failureStopReason(thrown), error: coerceError(thrown).message };
    }
  }

  async #subscribe({ mode, wakeups }: RunOptions): Promise<{ close(): Promise<void> } | undefined> {
    if (mode !== "loop" || wakeups === undefined) return undefined;
    const { queue, workerId, log } = this.#parts;
    const { leases } = this.#pipeline;
    const woken = (): void => {
      this.#pause.wokenFromOutside();
      this.#nudge.wake();
    };
    try {
      const subscription = await wakeups.subscribe([queue], {
        onWake: woken,
        onInterrupted: () => leases.connectionLost("the wake-up connection was lost"),
        // An operator cancelled a running job of the queue: stop its handler if it is one of this worker's.
        onCancelled: (cancelled) => {
          if (cancelled.workerId === workerId) leases.cancel(cancelled);
        },
      });
      // A wake-up sent while the connection was being made was not heard: the claim loop looks again, as if woken.
      woken();
      // Nor was a cancel of a job claimed meanwhile: a heartbeat now names those.
      void leases.beatNow();
      return subscription;
    } catch (thrown) {
      log.warn(`Could not subscribe to wake-ups, polling only: ${coerceError(thrown).message}`, { queue });
      return undefined;
    }
  }
}
