import { ConfigError } from "../errors/config-errors";
import type { JobDefinition } from "../job/job-definition";
import type { JobState } from "../job/job-state";

/** One step another step waits for, as its handler sees it in `ctx.dependencies()`. */
export interface DependencyRecord {
  readonly jobId: string;
  readonly step: string;
  readonly queue: string;
  /** `succeeded`, or `dead`/`cancelled` for a step that runs with `ignoreFailedDependencies`. */
  readonly state: JobState;
  /** Its payload, as stored (to say which one failed, say). */
  readonly payload: unknown;
  /** What its handler returned (`null` unless it succeeded). */
  readonly result: unknown;
  /** Why it failed, for a dead or cancelled one. */
  readonly lastError: string | null;
}

/**
 * The steps a workflow step waits for, read in one query when its handler
 * calls `ctx.dependencies()`: their results typed by their job kinds, and
 * the ones that failed (which only a step with `ignoreFailedDependencies`
 * ever sees).
 *
 * @example
 * ```ts
 * const deps = await ctx.dependencies();
 * const summaries = deps.results(SummariseDocument); // every summarise step's result, typed
 * const folder = deps.result("fetch", FetchDocuments);
 * if (deps.failed.length > 0) ctx.log(`${deps.failed.length} summaries failed`);
 * ```
 */
export class StepDependencies {
  /** Every step this one waits for, in id (enqueue) order. */
  readonly all: readonly DependencyRecord[];

  constructor(records: readonly DependencyRecord[]) {
    this.all = Object.freeze([...records]);
  }

  /** The steps waited for that ended `dead` or `cancelled`. */
  get failed(): readonly DependencyRecord[] {
    return this.all.filter((record) => record.state !== "succeeded");
  }

  /**
   * The results of the succeeded steps of one kind (given its
   * definition) or of one name (given a string), in enqueue order.
   */
  results<R>(kind: JobDefinition<any, R, any>): R[];
  results(step: string): unknown[];
  results(kindOrStep: JobDefinition<any, unknown, any> | string): unknown[] {
    return this.#succeeded(kindOrStep).map((record) => record.result);
  }

  /**
   * The result of the one succeeded step named `step` (checked to be of
   * `kind` when given). Throws a `ConfigError` when no step or several of
   * that name succeeded: use {@link results} for a list of steps.
   */
  result<R>(step: string, kind: JobDefinition<any, R, any>): R;
  result(step: string): unknown;
  result(step: string, kind?: JobDefinition<any, unknown, any>): unknown {
    const found = this.#succeeded(step).filter((record) => kind === undefined || record.queue === kind.name);
    if (found.length !== 1) {
      throw new ConfigError(
        "step",
        found.length === 0
          ? `no succeeded step ${JSON.stringify(step)}${kind === undefined ? "" : ` of kind ${JSON.stringify(kind.name)}`} is among this step's dependencies`
          : `${found.length} succeeded steps are named ${JSON.stringify(step)}: read them with results(${JSON.stringify(step)})`,
      );
    }
    return found[0]!.result;
  }

  #succeeded(kindOrStep: JobDefinition<any, unknown, any> | string): DependencyRecord[] {
    const matches =
      typeof kindOrStep === "string"
        ? (record: DependencyRecord) => record.step === kindOrStep
        : (record: DependencyRecord) => record.queue === kindOrStep.name;
    return this.all.filter((record) => record.state === "succeeded" && matches(record));
  }
}
