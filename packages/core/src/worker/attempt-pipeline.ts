import type { RunEvents } from "../events/run-events";
import type { Logger } from "../logging/logger";
import type { JobStore } from "../store/job-store";
import { AttemptExecutor, type JobHooks } from "./attempt-executor";
import { BatchExecutor } from "./batch-executor";
import { DeadHookRunner, type DeadHook } from "./dead-hook-runner";
import { LeaseKeeper } from "./lease-keeper";
import { OutcomeRecorder } from "./outcome-recorder";
import { StoreRetryPolicy } from "./store-retry-policy";
import type { ResolvedWorkerOptions } from "./worker-options";

/** What the wiring of a worker's attempts is built from: the worker, its store and its options. */
export interface AttemptPipelineParts<T> {
  readonly store: JobStore;
  readonly log: Logger;
  readonly options: ResolvedWorkerOptions;
  readonly workerId: string;
  readonly queue: string;
  readonly hooks: JobHooks<T>;
  /** The worker's `onDead`, run for the queue's deaths outside the handler slots (see {@link DeadHookRunner}). */
  readonly onDead: DeadHook;
  readonly events: RunEvents;
}

/**
 * Everything one attempt goes through between its claim and its recorded
 * outcome, wired once for a worker: the lease keeper, the executor (which
 * builds each attempt's `JobContext` from the same store, log and events),
 * the outcome recorder and the dead-hook runner that hears of each death it
 * commits. A run and `runJob` both build one, so the test kit runs the
 * production wiring.
 *
 * @example
 * ```ts
 * const pipeline = new AttemptPipeline({ store, log, options, workerId, queue, hooks, onDead, events });
 * pipeline.start();
 * const result = await pipeline.executor.run(pipeline.executor.claimed(job, clock.now()));
 * ```
 */
export class AttemptPipeline<T> {
  readonly policy: StoreRetryPolicy;
  readonly leases: LeaseKeeper;
  readonly deadHooks: DeadHookRunner;
  readonly recorder: OutcomeRecorder;
  readonly executor: AttemptExecutor<T>;
  /** Runs attempts in batches through the same executor (for `batchSize` above 1). */
  readonly batches: BatchExecutor<T>;

  constructor(parts: AttemptPipelineParts<T>) {
    const { store, options, workerId, log, hooks, events, queue, onDead } = parts;
    this.leases = new LeaseKeeper(store, options, workerId, log);
    // A store call that failed for the connection's sake may mean the database crashed: the keeper stops unflushed claims.
    this.policy = new StoreRetryPolicy(options.clock, this.leases);
    const shared = { store, workerId, log, events, policy: this.policy, secretFields: hooks.secretFields };
    this.deadHooks = new DeadHookRunner({ ...shared, queue, options, hook: onDead });
    this.recorder = new OutcomeRecorder({
      ...shared,
      leaseMs: options.leaseMs,
      died: (job, error) => this.deadHooks.died(job, error),
      writes: this.leases,
    });
    this.executor = new AttemptExecutor({ store, workerId, log, options, hooks, leases: this.leases, recorder: this.recorder, events });
    this.batches = new BatchExecutor({ executor: this.executor, hooks, leases: this.leases, events, options, log, workerId });
  }

  /** Starts the heartbeat, the lease deadline watcher and the dead-hook runner. */
  start(): void {
    this.leases.start();
    this.deadHooks.start();
  }
}
