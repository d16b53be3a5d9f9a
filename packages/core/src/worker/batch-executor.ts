import { endAttemptSpan, startAttemptSpan, tracingIsOn } from "../tracing/job-tracing";
import { isThenable } from "../validation/is-thenable";
import { parseFailed, stoppedBeforeStart, type AttemptExecutor, type AttemptResult } from "./attempt-executor";
import type { AttemptPipelineParts } from "./attempt-pipeline";
import { BatchJob } from "./batch-job";
import type { BatchLease } from "./batch-lease";
import { BatchRun } from "./batch-run";
import type { LeaseKeeper } from "./lease-keeper";

/** What a {@link BatchExecutor} works with: the worker's attempt executor and hooks, and the run's lease keeper. */
export interface BatchExecutorParts<T> extends Pick<AttemptPipelineParts<T>, "hooks" | "events" | "options" | "log" | "workerId"> {
  readonly executor: AttemptExecutor<T>;
  readonly leases: LeaseKeeper;
}

/** Told of each attempt of a batch the moment its outcome is recorded (before the whole batch is). */
export type AttemptRecorded = (result: AttemptResult) => void;

/**
 * Runs the attempts of one batch through one `processBatch` call, under
 * the batch's one lease ({@link BatchLease}: one deadline, renewed in one
 * heartbeat, released once the last outcome is recorded). Each attempt
 * keeps what a single one has: its own signal (a cancel stops it alone),
 * its parse (a payload that does not parse is
 * dead at once, the rest run), its `JobContext` and its outcome, recorded
 * the moment the job settles: by `ctx.succeed` or `ctx.fail`, by its own
 * signal (a cancel, a lost lease, shutdown), or when the handler resolves
 * (the rest succeed) or throws (the rest fail). So a batch that dies
 * half-way leaves only its unsettled jobs to run again.
 *
 * What a batch shares costs it once, not once per job (see {@link BatchRun}):
 * the successes settled together are written as one group of the next
 * completion statement, with one promise; an entry's `JobContext` is made
 * only when the handler reads `entry.ctx`; a job's signal is watched
 * without a promise of its own.
 *
 * @example
 * ```ts
 * const results = await new BatchExecutor(parts).run(lease, () => slots.free());
 * ```
 */
export class BatchExecutor<T> {
  readonly #parts: BatchExecutorParts<T>;

  constructor(parts: BatchExecutorParts<T>) {
    this.#parts = parts;
  }

  /**
   * Runs the lease's attempts as one batch, records each one's outcome and
   * releases the lease; never rejects. `handled` is called once the
   * handler has answered (the slot is free), before the last outcomes are
   * written; `recorded` hears of each attempt as soon as its outcome is recorded.
   */
  async run(lease: BatchLease, handled: () => void = () => undefined, recorded?: AttemptRecorded): Promise<AttemptResult[]> {
    const run = await this.#process(lease, recorded);
    handled();
    // Every job is settled and handed to the recorder: only ids and attempt numbers wait for the writes.
    lease.letGo();
    try {
      return await run.allRecorded();
    } finally {
      this.#parts.leases.releaseBatch(lease);
    }
  }

  /** Starts the batch's jobs, runs `processBatch` and settles every job. */
  async #process(lease: BatchLease, recorded: AttemptRecorded | undefined): Promise<BatchRun<T>> {
    const { executor, hooks, leases, events, options } = this.#parts;
    const started = options.clock.now();
    const traced = tracingIsOn();
    const attempts = lease.attempts;
    const run = new BatchRun<T>(this.#parts, lease, started, recorded);
    const jobs: BatchJob<T>[] = [];
    const held = leases.holdsBatch(lease);
    const announce = events.wants("job.started");
    for (let index = 0; index < attempts.length; index += 1) {
      const attempt = attempts[index]!;
      if (!held || attempt.signal.reason !== undefined) {
        run.recordAlone(index, executor.record(attempt, stoppedBeforeStart(attempt.signal)));
        continue;
      }
      if (announce) events.jobStarted(attempt.job);
      // Each job has its consumer span, from its start to its settling; the handler's own spans cannot be any one job's children.
      const span = traced ? startAttemptSpan(attempt.job).span : undefined;
      try {
        // A parse that answers at once costs no turn of the microtask queue (most do).
        const parsed = hooks.parse(attempt.job.payload);
        const item = isThenable(parsed) ? await parsed : parsed;
        jobs.push(new BatchJob(run, index, attempt, item, span));
      } catch (thrown) {
        const outcome = parseFailed(thrown, options.clock.now() - started);
        if (span !== undefined) endAttemptSpan(span, outcome.kind, "error" in outcome ? outcome.error : undefined);
        run.recordAlone(index, executor.record(attempt, outcome));
      }
    }
    if (jobs.length > 0) await run.process(jobs);
    return run;
  }
}
