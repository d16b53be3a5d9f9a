import { ConfigError } from "../errors/config-errors";
import { LeaseLostError } from "../errors/job-errors";
import { buildNewJob } from "../job/enqueue-options";
import { assertPayloadFitsSchema } from "../job/payload-schema";
import type { ClaimedJob } from "../job/job-record";
import { EMPTY_META } from "../job/job-meta";
import type { JsonObject } from "../job/json-types";
import type { RunEvents } from "../events/run-events";
import { redactingLogger, secretValuesOf } from "../job/secret-fields";
import { serializeResult } from "../job/serialize-payload";
import type { Logger } from "../logging/logger";
import type { JobStore } from "../store/job-store";
import type { AttemptSignal } from "./attempt-signal";
import type { JobContext } from "./job-context";
import { ProgressReporter } from "./progress-reporter";

/**
 * The `JobContext` of one attempt. What most handlers never touch is made
 * on first use: the `AbortController` behind `signal`, the job's
 * logger (a child with the job's fields, redacting its secret fields) and
 * the progress reporter.
 */
export class AttemptContext implements JobContext {
  readonly job: ClaimedJob;
  readonly workerId: string;
  readonly #store: JobStore;
  readonly #runLog: Logger;
  readonly #secretFields: readonly string[];
  readonly #abort: AttemptSignal;
  readonly #events: RunEvents;
  #log: Logger | undefined;
  #progress: ProgressReporter | undefined;
  #completedInTransaction = false;

  constructor(parts: {
    readonly store: JobStore;
    readonly workerId: string;
    readonly log: Logger;
    readonly job: ClaimedJob;
    readonly abort: AttemptSignal;
    /** The job kind's `secretFields`: their values are redacted from every line of the job's logger. */
    readonly secretFields: readonly string[];
    readonly events: RunEvents;
  }) {
    this.job = parts.job;
    this.workerId = parts.workerId;
    this.#store = parts.store;
    this.#runLog = parts.log;
    this.#secretFields = parts.secretFields;
    this.#abort = parts.abort;
    this.#events = parts.events;
  }

  get meta(): JsonObject {
    return this.job.meta ?? EMPTY_META;
  }

  readonly progress: JobContext["progress"] = (value) => {
    this.#progress ??= new ProgressReporter({ store: this.#store, workerId: this.workerId, job: this.job, log: this.log, events: this.#events });
    this.#progress.report(value);
  };

  /** Resolves once the progress reported so far is stored (or dropped); the executor awaits it before the outcome. */
  flushProgress(): Promise<void> {
    return this.#progress?.flush() ?? Promise.resolve();
  }

  get signal(): AbortSignal {
    return this.#abort.signal;
  }

  get log(): Logger {
    const { job, workerId } = this;
    this.#log ??= redactingLogger(
      this.#runLog.child({ jobId: job.id, queue: job.queue, attempt: job.attempt, maxAttempts: job.maxAttempts, workerId }),
      secretValuesOf(job.payload, this.#secretFields),
    );
    return this.#log;
  }

  /** `ctx.transaction` committed the job's success: nothing is left to write. */
  get completedInTransaction(): boolean {
    return this.#completedInTransaction;
  }

  readonly enqueue: JobContext["enqueue"] = async (definition, payload, options) => {
    if (definition.schema !== undefined) await assertPayloadFitsSchema(definition.name, definition.schema, payload);
    return this.#store.enqueue(buildNewJob(definition, payload, options), options?.transaction);
  };

  readonly once: JobContext["once"] = async (key, effect) => {
    const { result } = await this.#store.runEffectOnce({ key, jobId: this.job.id, resultJson: serializeResult }, effect);
    return result as Awaited<ReturnType<typeof effect>>;
  };

  readonly transaction: JobContext["transaction"] = async (work) => {
    if (this.#completedInTransaction) throw new ConfigError("transaction", "ctx.transaction already completed this job");
    const { applied, value } = await this.#store.completeInTransaction({ workerId: this.workerId, job: this.job, resultJson: serializeResult }, work);
    if (!applied) throw new LeaseLostError(`lost the lease on job ${this.job.id}; the transaction was rolled back`);
    this.#completedInTransaction = true;
    return value as Awaited<ReturnType<typeof work>>;
  };
}
