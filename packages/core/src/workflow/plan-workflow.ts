import { buildNewJob } from "../job/enqueue-options";
import { assertPayloadFitsSchema } from "../job/payload-schema";
import { MAX_STEP_DEPENDENCIES, MAX_WORKFLOW_DEPENDENCIES, MAX_WORKFLOW_NAME_LENGTH, MAX_WORKFLOW_STEPS } from "../limits";
import { StintError } from "../errors/stint-error";
import type { NewWorkflowStep } from "../store/workflow-store";
import { WorkflowDefinitionError } from "./workflow-errors";
import type { StepOptions, WorkflowStep, WorkflowSteps } from "./workflow-step";

const NAME = /^[A-Za-z0-9_][A-Za-z0-9_.:-]*$/;
const REFUSED_OPTIONS = ["transaction", "dedupeKey", "dedupe", "unique"] as const;

/**
 * Checks a workflow's name: 1 to `MAX_WORKFLOW_NAME_LENGTH` characters of
 * letters, digits, `_`, `.`, `:` and `-`, not starting with a punctuation mark.
 *
 * @example
 * ```ts
 * assertWorkflowName("month-end"); // fine
 * assertWorkflowName("");          // WorkflowDefinitionError
 * ```
 */
export function assertWorkflowName(name: unknown): asserts name is string {
  if (typeof name !== "string" || name.length > MAX_WORKFLOW_NAME_LENGTH || !NAME.test(name)) {
    throw new WorkflowDefinitionError(
      String(name),
      `a workflow's name must be 1 to ${MAX_WORKFLOW_NAME_LENGTH} letters, digits, "_", ".", ":" or "-", starting with a letter, digit or "_"`,
    );
  }
}

/**
 * Turns the named steps of a workflow into the rows a store inserts, in
 * declaration order (a list's steps in list order): each step's job built
 * as `enqueue` builds it, and its `after` names resolved to positions.
 * Refuses, with a {@link WorkflowDefinitionError} naming the step, a name
 * no step has, a step waiting for itself, a cycle, an option a step cannot
 * take, and more than `MAX_WORKFLOW_STEPS` steps, `MAX_STEP_DEPENDENCIES`
 * dependencies of one step or `MAX_WORKFLOW_DEPENDENCIES` in all.
 * With `added` (`ctx.addSteps`), a name no step of `steps` has is refused
 * as one that added steps may not wait for.
 *
 * @example
 * ```ts
 * const rows = planWorkflowSteps({ a: step(A, {}), b: step(B, {}, { after: ["a"] }) });
 * rows[1].after; // [0]
 * ```
 */
export function planWorkflowSteps(steps: WorkflowSteps, options: { readonly added?: boolean } = {}): NewWorkflowStep[] {
  if (typeof steps !== "object" || steps === null || Array.isArray(steps)) {
    throw new WorkflowDefinitionError("(steps)", "the steps must be an object of named steps");
  }
  const names = Object.keys(steps);
  if (names.length === 0) throw new WorkflowDefinitionError("(steps)", "a workflow needs at least one step");
  const positions = new Map<string, number[]>();
  const declared: { name: string; entry: WorkflowStep }[] = [];
  for (const name of names) {
    if (name.length > MAX_WORKFLOW_NAME_LENGTH || !NAME.test(name)) {
      throw new WorkflowDefinitionError(name, `a step's name must be 1 to ${MAX_WORKFLOW_NAME_LENGTH} letters, digits, "_", ".", ":" or "-"`);
    }
    const value = steps[name];
    const list = Array.isArray(value) ? (value as readonly WorkflowStep[]) : [value as WorkflowStep];
    positions.set(name, []);
    for (const entry of list) {
      if (typeof entry !== "object" || entry === null || typeof entry.definition !== "object") {
        throw new WorkflowDefinitionError(name, "must be a step(…) or a list of them");
      }
      positions.get(name)!.push(declared.length);
      declared.push({ name, entry });
      if (declared.length > MAX_WORKFLOW_STEPS) throw new WorkflowDefinitionError(name, `a workflow holds at most ${MAX_WORKFLOW_STEPS} steps`);
    }
  }
  assertAcyclic(names, steps, positions, options.added === true);
  let dependencies = 0;
  return declared.map(({ name, entry }) => {
    const after = (entry.options.after ?? []).flatMap((other) => positions.get(other)!);
    if (after.length > MAX_STEP_DEPENDENCIES)
      throw new WorkflowDefinitionError(name, `waits for ${after.length} steps; a step waits for at most ${MAX_STEP_DEPENDENCIES}`);
    dependencies += after.length;
    if (dependencies > MAX_WORKFLOW_DEPENDENCIES) {
      throw new WorkflowDefinitionError(name, `the workflow has more than ${MAX_WORKFLOW_DEPENDENCIES} dependencies (one step waiting for one other)`);
    }
    return Object.freeze({
      step: name,
      job: buildStepJob(name, entry),
      after: Object.freeze(after),
      ignoreFailedDependencies: entry.options.ignoreFailedDependencies === true,
    });
  });
}

/** The step's job, built as `enqueue` builds one; a problem with its options or payload is reported as the step's. */
function buildStepJob(name: string, entry: WorkflowStep): NewWorkflowStep["job"] {
  const { after: _after, ignoreFailedDependencies, ...options } = entry.options as StepOptions & Record<string, unknown>;
  for (const refused of REFUSED_OPTIONS) {
    if (refused in options) {
      throw new WorkflowDefinitionError(name, `a step takes no \`${refused}\`: a step belongs to its workflow, enqueued or not with it`);
    }
  }
  if (ignoreFailedDependencies !== undefined && typeof ignoreFailedDependencies !== "boolean") {
    throw new WorkflowDefinitionError(name, "`ignoreFailedDependencies` must be true or false");
  }
  try {
    return buildNewJob(entry.definition, entry.payload, options);
  } catch (thrown) {
    if (thrown instanceof StintError) throw new WorkflowDefinitionError(name, thrown.message, { cause: thrown });
    throw thrown;
  }
}

/** Refuses an `after` naming no step of `steps`, and any cycle among the names, naming a step on it. */
function assertAcyclic(names: readonly string[], steps: WorkflowSteps, positions: ReadonlyMap<string, number[]>, added: boolean): void {
  const waitsFor = new Map<string, Set<string>>();
  for (const name of names) waitsFor.set(name, new Set());
  for (const name of names) {
    const value = steps[name];
    for (const entry of Array.isArray(value) ? (value as readonly WorkflowStep[]) : [value as WorkflowStep]) {
      const after = entry.options.after ?? [];
      if (!Array.isArray(after)) throw new WorkflowDefinitionError(name, "`after` must be a list of step names");
      for (const other of after) {
        if (typeof other !== "string" || !positions.has(other)) {
          const why = added
            ? `waits for ${JSON.stringify(other)}, which is not a step of this addSteps call: steps added at run time wait only for steps added by the same call (the step adding them has not finished yet)`
            : `waits for ${JSON.stringify(other)}, which no step of the workflow is named`;
          throw new WorkflowDefinitionError(name, why);
        }
        if (other === name) throw new WorkflowDefinitionError(name, "waits for itself");
        waitsFor.get(name)!.add(other);
      }
    }
  }
  // Kahn's algorithm: what is left once every step with nothing left to wait for is taken is on a cycle.
  const remaining = new Map([...waitsFor].map(([name, set]) => [name, set.size]));
  const waitedBy = new Map<string, string[]>(names.map((name) => [name, []]));
  for (const [name, set] of waitsFor) for (const other of set) waitedBy.get(other)!.push(name);
  const ready = names.filter((name) => remaining.get(name) === 0);
  for (let next = ready.pop(); next !== undefined; next = ready.pop()) {
    remaining.delete(next);
    for (const waiter of waitedBy.get(next)!) {
      const left = remaining.get(waiter)! - 1;
      remaining.set(waiter, left);
      if (left === 0) ready.push(waiter);
    }
  }
  const onCycle = [...remaining.keys()];
  if (onCycle.length > 0) throw new WorkflowDefinitionError(onCycle[0]!, `waits, directly or not, for itself: a cycle among ${onCycle.join(", ")}`);
}

/**
 * Validates each step's payload with its kind's schema (awaiting an
 * asynchronous validator), in order; a payload the schema rejects is
 * refused with a {@link WorkflowDefinitionError} naming the step, whose
 * `cause` is the `PayloadSchemaError` naming each field.
 *
 * @example
 * ```ts
 * await checkStepSchemas([{ name: "welcome", step: step(Welcome, { email: "nope" }) }]); // WorkflowDefinitionError: step "welcome": …
 * ```
 */
export async function checkStepSchemas(steps: readonly { readonly name: string; readonly step: WorkflowStep }[]): Promise<void> {
  for (const { name, step } of steps) {
    if (step.definition.schema === undefined) continue;
    try {
      await assertPayloadFitsSchema(step.definition.name, step.definition.schema, step.payload);
    } catch (thrown) {
      if (thrown instanceof StintError) throw new WorkflowDefinitionError(name, thrown.message, { cause: thrown });
      throw thrown;
    }
  }
}
