import { ConfigError } from "../errors/config-errors";
import { LeaseLostError } from "../errors/job-errors";
import { serializeLogLine } from "../job/job-log";
import { mergeMetaPatch, serializeMetaPatch } from "../job/meta-patch";
import { buildNewJob } from "../job/enqueue-options";
import { assertPayloadFitsSchema } from "../job/payload-schema";
import type { ClaimedJob } from "../job/job-record";
import { EMPTY_META } from "../job/job-meta";
import type { JsonObject } from "../job/json-types";
import type { RunEvents } from "../events/run-events";
import { redactingLogger, redactText, secretValuesOf } from "../job/secret-fields";
import { serializeResult } from "../job/serialize-payload";
import type { Logger } from "../logging/logger";
import type { JobStore } from "../store/job-store";
import type { AttemptSignal } from "./attempt-signal";
import type { Clock } from "../time/clock";
import type { JobContext, JobLog } from "./job-context";
import { JobLogWriter } from "./job-log-writer";
import type { NewWorkflowStep } from "../store/workflow-store";
import { StepDependencies } from "../workflow/step-dependencies";
import { checkStepSchemas, planWorkflowSteps } from "../workflow/plan-workflow";
import type { WorkflowStep } from "../workflow/workflow-step";
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
  readonly #clock: Clock;
  #log: JobLog | undefined;
  #secrets: readonly string[] | undefined;
  #progress: ProgressReporter | undefined;
  #lines: JobLogWriter | undefined;
  /** The job's meta after this attempt's `updateMeta` calls (`undefined`: as claimed). */
  #meta: JsonObject | undefined;
  #completedInTransaction = false;
  #dependencies: Promise<StepDependencies> | undefined;
  /** Steps `addSteps` asked for, written with the job's success. */
  #addedSteps: NewWorkflowStep[] = [];
  /** The added steps whose kinds have a payload schema, checked (asynchronously) before they are written. */
  #schemaChecks: { readonly name: string; readonly step: WorkflowStep }[] = [];

  constructor(parts: {
    readonly store: JobStore;
    readonly workerId: string;
    readonly log: Logger;
    readonly job: ClaimedJob;
    readonly abort: AttemptSignal;
    /** The job kind's `secretFields`: their values are redacted from every line of the job's logger. */
    readonly secretFields: readonly string[];
    readonly events: RunEvents;
    /** Times the batching of `ctx.log` lines. */
    readonly clock: Clock;
  }) {
    this.job = parts.job;
    this.workerId = parts.workerId;
    this.#store = parts.store;
    this.#runLog = parts.log;
    this.#secretFields = parts.secretFields;
    this.#abort = parts.abort;
    this.#events = parts.events;
    this.#clock = parts.clock;
  }

  get meta(): JsonObject {
    return this.#meta ?? this.job.meta ?? EMPTY_META;
  }

  readonly updateMeta: JobContext["updateMeta"] = async (patch) => {
    const patchJson = serializeMetaPatch(patch);
    // The store checks the size too; checking here fails an oversized patch before a round trip.
    mergeMetaPatch(JSON.stringify(this.meta), patchJson);
    const { id, attempt } = this.job;
    const applied = await this.#store.updateJobMeta({ workerId: this.workerId, job: { id, attempt }, patchJson });
    if (!applied) throw new LeaseLostError(`lost the lease on job ${id}; its meta was not updated`);
    // Merged onto the meta as it is now, so calls that overlapped each keep their keys, as the store did.
    this.#meta = Object.freeze(JSON.parse(mergeMetaPatch(JSON.stringify(this.meta), patchJson)) as JsonObject);
  };

  readonly progress: JobContext["progress"] = (value) => {
    this.#progress ??= new ProgressReporter({ store: this.#store, workerId: this.workerId, job: this.job, log: this.log, events: this.#events });
    this.#progress.report(value);
  };

  /** Resolves once the progress and log lines reported so far are stored (or dropped); the executor awaits it before the outcome. */
  flushProgress(): Promise<void> {
    // The common case, an attempt that never logged, costs what it did before logs existed.
    if (this.#lines === undefined) return this.#progress?.flush() ?? Promise.resolve();
    return this.#flushProgressAndLines(this.#lines);
  }

  /** Whether progress values or log lines were reported: {@link flushProgress} then has something to store. */
  get writesPending(): boolean {
    return this.#lines !== undefined || this.#progress !== undefined;
  }

  async #flushProgressAndLines(lines: JobLogWriter): Promise<void> {
    await this.#progress?.flush();
    await lines.flush();
  }

  get signal(): AbortSignal {
    return this.#abort.signal;
  }

  get log(): JobLog {
    this.#log ??= this.#jobLog();
    return this.#log;
  }

  /** `ctx.log`: a function that appends to the job's log, carrying the process logger's methods. */
  #jobLog(): JobLog {
    const { job, workerId } = this;
    this.#secrets = secretValuesOf(job.payload, this.#secretFields);
    const logger = redactingLogger(
      this.#runLog.child({ jobId: job.id, queue: job.queue, attempt: job.attempt, maxAttempts: job.maxAttempts, workerId }),
      this.#secrets,
    );
    const append = (message: string, fields?: JsonObject): void => this.#appendLine(message, fields);
    return Object.assign(append, {
      error: logger.error.bind(logger),
      warn: logger.warn.bind(logger),
      info: logger.info.bind(logger),
      debug: logger.debug.bind(logger),
      child: logger.child.bind(logger),
      ...(logger.isLevelEnabled === undefined ? {} : { isLevelEnabled: logger.isLevelEnabled.bind(logger) }),
    });
  }

  #appendLine(message: string, fields: JsonObject | undefined): void {
    const secrets = this.#secrets ?? [];
    const line =
      secrets.length === 0
        ? serializeLogLine(message, fields, new Date(this.#clock.now()))
        : serializeLogLine(redactText(String(message), secrets), redactedFields(fields, secrets), new Date(this.#clock.now()));
    this.#lines ??= new JobLogWriter({ store: this.#store, workerId: this.workerId, job: this.job, log: this.log, clock: this.#clock });
    this.#lines.append(line);
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
    const added = this.#addedSteps;
    if (added.length > 0) await checkStepSchemas(this.#schemaChecks);
    const withSteps =
      added.length === 0
        ? work
        : async (trx: unknown) => {
            const ids = await this.#store.addWorkflowSteps(
              { workerId: this.workerId, parent: { id: this.job.id, attempt: this.job.attempt }, steps: added },
              trx,
            );
            if (ids === undefined) throw new LeaseLostError(`lost the lease on job ${this.job.id}; the steps it added were not written`);
            return work(trx);
          };
    const { applied, value } = await this.#store.completeInTransaction({ workerId: this.workerId, job: this.job, resultJson: serializeResult }, withSteps);
    if (!applied) throw new LeaseLostError(`lost the lease on job ${this.job.id}; the transaction was rolled back`);
    this.#completedInTransaction = true;
    return value as Awaited<ReturnType<typeof work>>;
  };

  readonly dependencies: JobContext["dependencies"] = () => {
    this.#dependencies ??= this.#readDependencies();
    return this.#dependencies;
  };

  async #readDependencies(): Promise<StepDependencies> {
    if (this.job.workflowId === undefined) throw new ConfigError("dependencies", `job ${this.job.id} is not a workflow step`);
    return new StepDependencies(await this.#store.readDependencies({ jobId: this.job.id }));
  }

  readonly addSteps: JobContext["addSteps"] = (steps) => {
    if (this.job.workflowId === undefined)
      throw new ConfigError("addSteps", `job ${this.job.id} is not a workflow step: only a step adds steps to its workflow`);
    if (this.#completedInTransaction) throw new ConfigError("addSteps", "ctx.transaction already completed this job: add steps before it");
    const offset = this.#addedSteps.length;
    for (const planned of planWorkflowSteps(steps, { added: true }))
      this.#addedSteps.push({ ...planned, after: planned.after.map((position) => position + offset) });
    for (const [name, entry] of Object.entries(steps)) {
      for (const one of Array.isArray(entry) ? (entry as readonly WorkflowStep[]) : [entry as WorkflowStep]) {
        if (one.definition.schema !== undefined) this.#schemaChecks.push({ name, step: one });
      }
    }
  };

  /** Whether `addSteps` left steps to write with the job's success. */
  get addsSteps(): boolean {
    return this.#addedSteps.length > 0 && !this.#completedInTransaction;
  }

  /** Records the job's success with `result` and the steps `addSteps` asked for, in one transaction (see {@link transaction}). */
  async completeWithAddedSteps(result: unknown): Promise<void> {
    await this.transaction(() => Promise.resolve(result));
  }
}

/** `fields` with the job's secret values redacted from its text (fields that are not JSON are left for `serializeLogLine` to refuse). */
function redactedFields(fields: JsonObject | undefined, secrets: readonly string[]): unknown {
  if (fields === undefined || fields === null) return fields;
  let text: string | undefined;
  try {
    text = JSON.stringify(fields);
  } catch {
    return fields;
  }
  if (text === undefined) return fields;
  try {
    return JSON.parse(redactText(text, secrets)) as unknown;
  } catch {
    return { redacted: "[fields hidden: they held a secret value]" };
  }
}
