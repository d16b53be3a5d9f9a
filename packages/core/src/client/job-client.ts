import { inject, injectable } from "tsyringe";
import { buildNewJob, type EnqueueOptions } from "../job/enqueue-options";
import type { JobDefinition } from "../job/job-definition";
import { assertPayloadFitsSchema } from "../job/payload-schema";
import { ConfigError } from "../errors/config-errors";
import { awaitJobEnd, type WaitOptions, type WaitTarget } from "./await-job";
import type { JsonObject } from "../job/json-types";
import { traceEnqueue } from "../tracing/job-tracing";
import { checkedJobStore } from "../store/checked-job-store";
import type { EnqueueResult, JobStore } from "../store/job-store";
import { JOB_STORE } from "../di/tokens";
import { ClientEvents } from "../events/client-events";
import { checkStepSchemas, planWorkflowSteps } from "../workflow/plan-workflow";
import { tracedSteps } from "../workflow/traced-steps";
import type { StepResultOf, WorkflowStep, WorkflowSteps } from "../workflow/workflow-step";
import { awaitWorkflowEnd } from "./await-workflow";
import { WorkflowNotFoundError } from "../workflow/workflow-errors";
import type { WorkflowRecord, WorkflowSummary } from "../workflow/workflow-record";
import type { ListWorkflowsParams } from "../store/workflow-store";

/**
 * What `enqueue` returns: the job's id (and whether it was a duplicate),
 * with its kind's result type `R` carried in the type only, so
 * `client.waitFor(job)` resolves to an `R`.
 */
export interface EnqueuedJob<R = unknown> extends EnqueueResult {
  /** Type-level only: never read at run time. */
  readonly __result?: () => R;
}

/** The result type of a workflow step's entry, carried by {@link EnqueuedWorkflow}. */
export type EnqueuedStep<E> = E extends readonly WorkflowStep<any, infer R>[]
  ? readonly EnqueuedJob<R>[]
  : E extends WorkflowStep<any, infer R>
    ? EnqueuedJob<R>
    : never;

/**
 * What `enqueueWorkflow` returns: the workflow's id and name, and each
 * step's job (a list of them for a list of steps), typed by the steps'
 * kinds, so that `client.waitFor(workflow)` resolves to their results.
 */
export interface EnqueuedWorkflow<S extends WorkflowSteps = WorkflowSteps> {
  readonly id: string;
  readonly name: string;
  readonly steps: { readonly [K in keyof S]: EnqueuedStep<S[K]> };
  /** Type-level only: never read at run time. */
  readonly __results?: () => WorkflowResults<S>;
}

/**
 * What `client.waitFor(workflow)` resolves with: the results of the
 * workflow's final steps (those no step waits for) by name, a list for a
 * list of steps. A step that other steps wait for is absent.
 */
export type WorkflowResults<S extends WorkflowSteps> = { readonly [K in keyof S]?: StepResultOf<S[K]> };

/** One job of a `enqueueMany` batch. */
export interface BatchItem<T> {
  readonly payload: T;
  readonly options?: Omit<EnqueueOptions, "transaction">;
}

/**
 * The producer side: puts typed jobs into the store. The payload type comes
 * from the job kind, so the compiler checks every call.
 *
 * @example
 * ```ts
 * const client = container.resolve(JobClient);
 * await client.enqueue(SendInvoice, { invoiceId: 812 });
 * await db.transaction().execute(async (trx) => {
 *   await trx.insertInto("invoices").values(invoice).execute();
 *   await client.enqueue(SendInvoice, { invoiceId: invoice.id }, { transaction: trx });
 * });
 * ```
 *
 * `transaction` is the store's kind of transaction: with the PostgreSQL
 * store, a Kysely one, a pg client inside `BEGIN`, a Drizzle one or a knex
 * one (see `EnqueueOptions.transaction`).
 */
@injectable()
export class JobClient {
  readonly #store: JobStore;

  /**
   * `job.enqueued` after each job this client inserts. Subscribe on the
   * instance you enqueue with (a container resolves a new `JobClient` each
   * time unless you register it as a singleton).
   *
   * @example
   * ```ts
   * client.events.on("job.enqueued", (event) => metrics.increment(event.queue));
   * ```
   */
  readonly events = new ClientEvents();

  /** Wraps `store` in a `CheckedJobStore` unless it is one, so every job is checked once before it is written. */
  constructor(@inject(JOB_STORE) store: JobStore) {
    this.#store = checkedJobStore(store);
  }

  /**
   * Inserts one job (or finds the active job holding its dedupe key). The
   * payload must read back exactly as given: a value JSON would change
   * (`Map`, `Set`, `Date`, typed arrays, class instances, `undefined` in an
   * array, `NaN` …), text `jsonb` cannot store, nesting deeper than 64
   * levels or more than the kind's `maxPayloadBytes` is refused with a
   * `PayloadError` naming its path, and nothing is inserted (see
   * `serializePayload`). A job kind defined with a `schema` validates the
   * payload first (awaiting an asynchronous validator): a payload it rejects
   * is refused with a `PayloadSchemaError` naming each field, and nothing is
   * inserted.
   *
   * @example
   * ```ts
   * await client.enqueue(SendInvoice, { invoiceId: 812 });
   * await client.enqueue(Report, { tags: new Set(["a"]) }); // PayloadError: payload.tags: a Set cannot be stored as JSON; convert it to an array
   * ```
   */
  async enqueue<T, R = unknown>(definition: JobDefinition<T, R, any>, payload: T, options: EnqueueOptions = {}): Promise<EnqueuedJob<R>> {
    // Only a kind with a schema pays for the await: enqueue is on the path from producer to handler start.
    if (definition.schema !== undefined) await assertPayloadFitsSchema(definition.name, definition.schema, payload);
    // In a producer span whose trace context goes into the job's meta: the attempts run under it.
    const result = await traceEnqueue(definition.name, 1, (withContext) =>
      this.#store.enqueue(buildNewJob(definition, payload, withMeta(options, withContext(options.meta))), options.transaction),
    );
    if (this.events.listenerCount("job.enqueued") > 0) this.#enqueued(definition.name, result, options.transaction !== undefined);
    return result;
  }

  /**
   * Inserts many jobs of one kind in one statement; results are in input order.
   * Every payload is checked (as for {@link enqueue}) before anything is
   * written: one refused payload refuses the whole batch. `transaction`
   * takes what {@link enqueue}'s does: the batch commits with it.
   *
   * @example
   * ```ts
   * await knex.transaction(async (trx) => {
   *   await trx("invoices").insert(invoices);
   *   await client.enqueueMany(SendInvoice, invoices.map((invoice) => ({ payload: { invoiceId: invoice.id } })), { transaction: trx });
   * });
   * ```
   */
  async enqueueMany<T, R = unknown>(
    definition: JobDefinition<T, R, any>,
    items: readonly BatchItem<T>[],
    options: { readonly transaction?: unknown } = {},
  ): Promise<readonly EnqueuedJob<R>[]> {
    if (definition.schema !== undefined) for (const item of items) await assertPayloadFitsSchema(definition.name, definition.schema, item.payload);
    const results = await traceEnqueue(definition.name, items.length, (withContext) => {
      const jobs = items.map((item) => buildNewJob(definition, item.payload, withMeta(item.options ?? {}, withContext(item.options?.meta))));
      return this.#store.enqueueMany(jobs, options.transaction);
    });
    if (this.events.listenerCount("job.enqueued") > 0) {
      for (const result of results) this.#enqueued(definition.name, result, options.transaction !== undefined);
    }
    return results;
  }

  /**
   * Enqueues a workflow: every step a job of its own kind (its worker,
   * retries, timeout, group and caps apply), each waiting for the steps
   * its `after` names, all written atomically, in `transaction` when given.
   * A step with dependencies is `blocked` until they have all succeeded,
   * and never claimed before; the statement recording the last one's
   * success makes it claimable. A step whose dependency ends dead or
   * cancelled is cancelled too (unless it set `ignoreFailedDependencies`).
   * Refuses a cycle, an unknown or self-naming `after`, a dedupe key or
   * unique window on a step, and more than `MAX_WORKFLOW_STEPS` steps with
   * a `WorkflowDefinitionError` naming the step; a payload as `enqueue`
   * does. Nothing is written then.
   *
   * @example
   * ```ts
   * const workflow = await client.enqueueWorkflow("digest", {
   *   fetch: step(FetchDocuments, { folder: "inbox" }),
   *   summarise: documents.map((id) => step(SummariseDocument, { id }, { after: ["fetch"] })),
   *   report: step(BuildReport, { folder: "inbox" }, { after: ["summarise"] }),
   * });
   * const { report } = await client.waitFor(workflow); // BuildReport's result
   * ```
   */
  async enqueueWorkflow<S extends WorkflowSteps>(name: string, steps: S, options: { readonly transaction?: unknown } = {}): Promise<EnqueuedWorkflow<S>> {
    const planned = planWorkflowSteps(steps);
    await checkStepSchemas(
      Object.entries(steps).flatMap(([stepName, entry]) =>
        (Array.isArray(entry) ? entry : [entry]).map((one: WorkflowStep) => ({ name: stepName, step: one })),
      ),
    );
    // One producer span for the workflow, named by it; each step's attempts run under it (its context in the steps' meta).
    const { id, jobIds } = await traceEnqueue(name, planned.length, (withContext) =>
      this.#store.enqueueWorkflow({ name, steps: tracedSteps(planned, withContext) }, options.transaction),
    );
    const byName: Record<string, EnqueuedJob | readonly EnqueuedJob[]> = {};
    let position = 0;
    for (const [stepName, entry] of Object.entries(steps)) {
      const count = Array.isArray(entry) ? entry.length : 1;
      const jobs = jobIds.slice(position, position + count).map((jobId) => Object.freeze({ id: jobId, duplicate: false }));
      position += count;
      byName[stepName] = Array.isArray(entry) ? Object.freeze(jobs) : jobs[0]!;
    }
    if (this.events.listenerCount("job.enqueued") > 0) {
      planned.forEach((entry, index) => this.#enqueued(entry.job.queue, { id: jobIds[index]!, duplicate: false }, options.transaction !== undefined));
    }
    return Object.freeze({ id, name, steps: Object.freeze(byName) as EnqueuedWorkflow<S>["steps"] });
  }

  /**
   * Waits until a job finishes and resolves with its result (typed by its
   * kind). Rejects with a `JobFailedError` (code `STINT_JOB_FAILED`, with
   * `state` `dead` or `cancelled`, `lastError`, `lastErrorCode`,
   * `attempts`) when it will not succeed, a `JobNotFoundError` for an
   * unknown id, a `WaitTimeoutError` after `timeoutMs`, and the signal's
   * reason when `signal` aborts. A job whose attempt failed with a retry
   * scheduled is still waited for.
   *
   * A notification in the statement that finishes the job wakes the wait
   * (PostgreSQL: NOTIFY, received by one listening connection the store
   * shares among all its waiters); a read every `pollIntervalMs` (default
   * 5 s) finds what a lost notification did not announce.
   *
   * @example
   * ```ts
   * const job = await client.enqueue(ResizeImage, { imageId: 7 });
   * const { width } = await client.waitFor(job, { timeoutMs: 30_000 });
   * const same = await client.waitFor(ResizeImage, job.id);     // typed by the kind; checks the job is one
   * const any = await client.waitFor("812", { signal });         // unknown result
   * ```
   */
  waitFor<S extends WorkflowSteps>(workflow: EnqueuedWorkflow<S>, options?: WaitOptions): Promise<WorkflowResults<S>>;
  waitFor<R>(job: EnqueuedJob<R>, options?: WaitOptions): Promise<R>;
  waitFor<R>(definition: JobDefinition<any, R>, id: string, options?: WaitOptions): Promise<R>;
  waitFor(id: string, options?: WaitOptions): Promise<unknown>;
  async waitFor(first: unknown, second?: unknown, third?: unknown): Promise<unknown> {
    if (isEnqueuedWorkflow(first)) {
      const lists = new Set(Object.entries(first.steps).flatMap(([name, jobs]) => (Array.isArray(jobs) ? [name] : [])));
      return awaitWorkflowEnd(this.#store, first.id, { ...(second as WaitOptions | undefined), lists });
    }
    const { target, options } = waitArguments(first, second, third);
    const job = await awaitJobEnd(this.#store, target, options);
    return job.result;
  }

  /**
   * Waits for workflow `id` (when all you kept is its id) as
   * `waitFor(workflow)` does; its final steps' results by name, untyped.
   *
   * @example
   * ```ts
   * const { report } = await client.waitForWorkflow("41", { timeoutMs: 60_000 });
   * ```
   */
  waitForWorkflow(id: string, options?: WaitOptions): Promise<Record<string, unknown>> {
    return awaitWorkflowEnd(this.#store, id, options);
  }

  /**
   * A workflow with all its steps (states, timings, what each waits for),
   * or `undefined` for an unknown id.
   *
   * @example
   * ```ts
   * const workflow = await client.getWorkflow(enqueued.id);
   * console.log(workflow?.state, workflow?.steps.length);
   * ```
   */
  getWorkflow(workflow: WorkflowRef): Promise<WorkflowRecord | undefined> {
    return this.#store.getWorkflow({ id: workflowIdOf(workflow) });
  }

  /** Workflows, newest first (see `WorkflowStore.listWorkflows`). */
  listWorkflows(params: ListWorkflowsParams): Promise<readonly WorkflowSummary[]> {
    return this.#store.listWorkflows(params);
  }

  /**
   * Cancels a workflow: its steps still to run are cancelled, and its
   * running steps' handlers are told to stop (`ctx.signal` aborts with
   * `STINT_CANCELLED`). Resolves with how many steps it cancelled (0 for a
   * workflow whose steps have all finished: it keeps its state); rejects
   * with `WorkflowNotFoundError` for an unknown id.
   *
   * @example
   * ```ts
   * await client.cancelWorkflow(workflow);
   * ```
   */
  async cancelWorkflow(workflow: WorkflowRef): Promise<number> {
    const id = workflowIdOf(workflow);
    const cancelled = await this.#store.cancelWorkflow({ id });
    if (cancelled === undefined) throw new WorkflowNotFoundError(id);
    return cancelled;
  }

  #enqueued(queue: string, result: EnqueueResult, inTransaction: boolean): void {
    this.events.emit("job.enqueued", { jobId: result.id, queue, attempt: 0, duplicate: result.duplicate, inTransaction, at: new Date() });
  }
}

/** A workflow: what `enqueueWorkflow` returned, or its id. */
export type WorkflowRef = string | { readonly id: string };

function workflowIdOf(workflow: WorkflowRef): string {
  return typeof workflow === "string" ? workflow : workflow.id;
}

/** Whether `value` is what `enqueueWorkflow` returned. */
function isEnqueuedWorkflow(value: unknown): value is EnqueuedWorkflow {
  return (
    typeof value === "object" &&
    value !== null &&
    typeof (value as { id?: unknown }).id === "string" &&
    typeof (value as { steps?: unknown }).steps === "object"
  );
}

/** Sorts out the three forms of `waitFor`'s arguments. */
function waitArguments(first: unknown, second: unknown, third: unknown): { target: WaitTarget; options: WaitOptions | undefined } {
  if (typeof first === "string") return { target: { id: first }, options: second as WaitOptions | undefined };
  if (typeof first === "object" && first !== null) {
    const { id, name } = first as { id?: unknown; name?: unknown };
    if (typeof name === "string" && "defaults" in first) {
      return { target: { id: second as string, queue: name }, options: third as WaitOptions | undefined };
    }
    if (typeof id === "string") return { target: { id }, options: second as WaitOptions | undefined };
  }
  throw new ConfigError("jobOrId", "must be a job id, what enqueue returned, or a job kind followed by a job id");
}

/** `options` with `meta` in place of its own (the same object when nothing changed). */
function withMeta(options: EnqueueOptions, meta: JsonObject | undefined): EnqueueOptions {
  return meta === options.meta ? options : { ...options, meta };
}
