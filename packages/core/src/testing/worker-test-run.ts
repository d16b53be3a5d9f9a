import { ConfigError } from "../errors/config-errors";
import { logLines } from "../events/log-lines";
import { RunEvents } from "../events/run-events";
import { WorkerEvents } from "../events/worker-events";
import { buildNewJob } from "../job/enqueue-options";
import type { ClaimedJob } from "../job/job-record";
import type { Logger } from "../logging/logger";
import { rejectUnknownOptions } from "../validation/option-checks";
import { workerHooks, type AbstractQueueWorker } from "../worker/abstract-queue-worker";
import type { AttemptResult } from "../worker/attempt-executor";
import { AttemptPipeline } from "../worker/attempt-pipeline";
import type { ResolvedWorkerOptions } from "../worker/worker-options";
import { InMemoryJobStore } from "./memory/in-memory-job-store";
import type { RunJobOptions } from "./run-job";
import { toRunJobResult, type RunJobResult } from "./run-job-result";

const OPTION_KEYS = ["attempt", "maxAttempts", "timeoutMs", "meta", "clock", "store", "signal", "log"];

const QUIET: Logger = {
  error: () => undefined,
  warn: () => undefined,
  info: () => undefined,
  debug: () => undefined,
  child: () => QUIET,
  isLevelEnabled: () => false,
};

/**
 * What `runJob` and `runBatch` share: the worker's own attempt wiring
 * (`AttemptPipeline`) on an in-memory store, jobs started there as claimed
 * attempts, and each recorded attempt read back as a `RunJobResult`.
 */
export class WorkerTestRun {
  readonly store: InMemoryJobStore;
  readonly pipeline: AttemptPipeline<unknown>;
  readonly #options: RunJobOptions;
  readonly #worker: AbstractQueueWorker<unknown>;
  readonly #workerOptions: ResolvedWorkerOptions;
  /** What `onDead` threw, by job id (the run's own hub hears it). */
  readonly #onDeadErrors = new Map<string, Error>();

  constructor(worker: AbstractQueueWorker<any, any>, options: RunJobOptions, caller: "runJob" | "runBatch") {
    if (typeof options !== "object" || options === null) throw new ConfigError("options", "must be an object");
    rejectUnknownOptions(caller, options, OPTION_KEYS);
    const clock = options.clock ?? worker.options.clock;
    const store = options.store ?? new InMemoryJobStore({ clock });
    if (!(store instanceof InMemoryJobStore)) throw new ConfigError("store", "must be an InMemoryJobStore");
    this.store = store;
    this.#options = options;
    this.#worker = worker;
    this.#workerOptions = clock === worker.options.clock ? worker.options : Object.freeze({ ...worker.options, clock });
    const { queue, workerId } = worker;
    const log = (options.log ?? QUIET).child({ queue, workerId });
    const { onDead, ...hooks } = workerHooks<unknown>(worker);
    const heard = new WorkerEvents({ log });
    heard.on("job.onDeadFailed", (event) => this.#onDeadErrors.set(event.jobId, event.error));
    const events = new RunEvents([logLines(log, hooks.secretFields), worker.events, heard], { queue, workerId, clock });
    this.pipeline = new AttemptPipeline({ store, log, options: this.#workerOptions, workerId, queue, hooks, onDead, events });
  }

  /** Puts a job of the worker's kind with `payload` into the store as a claimed attempt. */
  startJob(payload: unknown): Promise<ClaimedJob> {
    const options = this.#options;
    const newJob = buildNewJob<unknown>(this.#worker.job, payload, {
      ...(options.maxAttempts === undefined ? {} : { maxAttempts: options.maxAttempts }),
      ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
      ...(options.meta === undefined ? {} : { meta: options.meta }),
    });
    return this.store.startJob({ job: newJob, workerId: this.#worker.workerId, leaseMs: this.#workerOptions.leaseMs, attempt: options.attempt ?? 1 });
  }

  /** Waits for the outcome writes and the `onDead` calls in flight. */
  async settle(): Promise<void> {
    await this.pipeline.recorder.drain();
    await this.pipeline.deadHooks.stop("when-empty");
  }

  /** How the attempt of `claimed` ended, as the store holds it now. */
  async resultOf<R>(claimed: ClaimedJob, { outcome, written }: AttemptResult): Promise<RunJobResult<R>> {
    const { store } = this;
    const job = await store.getJob({ id: claimed.id });
    // The worker's own writer stored the lines (redacted and trimmed) before the outcome; the test sees what it kept.
    const logs = (await store.listJobLogs({ jobId: claimed.id })).find((log) => log.attempt === claimed.attempt)?.lines ?? [];
    const onDeadError = this.#onDeadErrors.get(claimed.id);
    return toRunJobResult<R>(outcome, written, { job: job!, store, logs, endedAt: this.#workerOptions.clock.now(), onDeadError });
  }

  /** Stops the run's loops. */
  async stop(): Promise<void> {
    await this.pipeline.deadHooks.stop("now");
    await this.pipeline.leases.stop();
  }
}
