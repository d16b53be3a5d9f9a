import type { EnqueueOptions } from "../job/enqueue-options";
import type { JobDefinition } from "../job/job-definition";

/**
 * What a step takes besides its payload: the enqueue options of its job
 * (priority, attempts, timeout, delay, group, serial key, meta …) and its
 * place in the workflow. A step cannot carry a dedupe key or a unique
 * window: it belongs to its workflow, which is its own identity.
 */
export interface StepOptions extends Omit<EnqueueOptions, "transaction" | "dedupeKey" | "dedupe" | "unique"> {
  /**
   * The names of the steps this one waits for. Naming a list of steps
   * waits for every one of them. The step's job is `blocked` until all of
   * them succeeded; then it is claimed like any job of its kind.
   */
  readonly after?: readonly string[];
  /**
   * Run even when a step it waits for ends `dead` or `cancelled` (it then
   * sees which in `ctx.dependencies()`). Default false: such a step is
   * cancelled with a reason naming the step that failed, and so is every
   * step after it that does not opt in either.
   */
  readonly ignoreFailedDependencies?: boolean;
}

/**
 * One step of a workflow: a job of an ordinary job kind, with its payload
 * and {@link StepOptions}. `R` is the kind's result type, carried in the
 * type only, so that the steps after it and `client.waitFor` read it typed.
 *
 * @example
 * ```ts
 * const fetch = step(FetchDocuments, { folder: "inbox" });
 * const report = step(BuildReport, { folder: "inbox" }, { after: ["summarise"] });
 * ```
 */
export interface WorkflowStep<T = unknown, R = unknown> {
  readonly definition: JobDefinition<T, R, any>;
  readonly payload: T;
  readonly options: StepOptions;
}

/**
 * The steps of a workflow by name: one step, or a list of steps of one
 * name (a fan-out; a step after it waits for every one).
 */
export type WorkflowSteps = Readonly<Record<string, WorkflowStep<any, any> | readonly WorkflowStep<any, any>[]>>;

/** The result type of a named entry of {@link WorkflowSteps}: the kind's result, or a list of them for a list of steps. */
export type StepResultOf<E> = E extends readonly WorkflowStep<any, infer R>[] ? R[] : E extends WorkflowStep<any, infer R> ? R : never;

/**
 * Declares one step of a workflow: a job of `definition` with `payload`,
 * run after the steps `options.after` names. The payload is checked
 * against the kind's type by the compiler, and by its schema at enqueue.
 *
 * @example
 * ```ts
 * await client.enqueueWorkflow("month-end", {
 *   customers: step(ListCustomers, { month: "2026-10" }),
 *   report: step(BuildReport, { month: "2026-10" }, { after: ["customers"] }),
 * });
 * ```
 */
export function step<T, R>(definition: JobDefinition<T, R, any>, payload: T, options: StepOptions = {}): WorkflowStep<T, R> {
  return Object.freeze({ definition, payload, options });
}
