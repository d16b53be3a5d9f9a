import { JobFailedError } from "../errors/wait-errors";
import type { JobState } from "../job/job-state";
import type { JobStore } from "../store/job-store";
import { systemClock, type Clock } from "../time/clock";
import { WorkflowFailedError, WorkflowNotFoundError } from "../workflow/workflow-errors";
import type { WorkflowRecord, WorkflowStepRecord } from "../workflow/workflow-record";
import type { WaitOptions } from "./await-job";
import { awaitStepEnds } from "./await-step-ends";

const FINISHED: ReadonlySet<JobState> = new Set(["succeeded", "dead", "cancelled"]);

/**
 * Waits until workflow `id` finishes and resolves with the results of its
 * final steps (those no step waits for) by step name: one result for a
 * step, a list (in enqueue order) for a list of steps (the names in
 * `lists`, and any name several final steps share). Rejects with
 * `WorkflowFailedError` as soon as a final step is dead or cancelled (the
 * workflow will not succeed), naming the step that failed first;
 * `WorkflowNotFoundError` for an unknown id; `WaitTimeoutError` and the
 * signal's reason as `awaitJobEnd` does. The final steps still to end
 * are waited for together, as `client.waitFor` waits for a job (a
 * notification, or a read every `pollIntervalMs`), up to
 * `MAX_WATCHED_STEPS` at once: the end of any of them is noticed when it
 * comes, and, while more are waiting, the workflow is read again every
 * `pollIntervalMs` for the others. Steps added while it runs
 * (`ctx.addSteps`) are waited for too.
 *
 * @example
 * ```ts
 * const results = await awaitWorkflowEnd(store, "41", { timeoutMs: 60_000 });
 * results.report; // what the "report" step returned
 * ```
 */
export async function awaitWorkflowEnd(
  store: JobStore,
  id: string,
  options: WaitOptions & { readonly lists?: ReadonlySet<string> } = {},
  clock: Clock = systemClock,
): Promise<Record<string, unknown>> {
  const { lists, ...waitOptions } = options;
  const deadline = options.timeoutMs === undefined ? undefined : clock.now() + options.timeoutMs;
  for (;;) {
    const workflow = await store.getWorkflow({ id });
    if (workflow === undefined) throw new WorkflowNotFoundError(id);
    const finals = finalSteps(workflow);
    const failed = finals.find((entry) => entry.state === "dead" || entry.state === "cancelled");
    if (failed !== undefined || workflow.state === "failed" || workflow.state === "cancelled") throw failureOf(workflow);
    const waiting = finals.filter((entry) => entry.state !== "succeeded");
    if (waiting.length === 0 && workflow.state === "succeeded") return resultsOf(store, workflow.id, finals, lists);
    // Every final step succeeded but a step before them runs again (a dead one retried): wait for it rather than read the workflow in a loop.
    const unfinished = waiting.length > 0 ? waiting : workflow.steps.filter((entry) => !FINISHED.has(entry.state));
    try {
      await awaitStepEnds(
        store,
        unfinished.map((entry) => entry.jobId),
        { wait: waitOptions, deadline },
        clock,
      );
    } catch (thrown) {
      if (!(thrown instanceof JobFailedError)) throw thrown;
      const now = await store.getWorkflow({ id });
      throw failureOf(now ?? workflow);
    }
  }
}

/** The steps no step of the workflow waits for. */
function finalSteps(workflow: WorkflowRecord): WorkflowStepRecord[] {
  const waitedFor = new Set(workflow.steps.flatMap((entry) => entry.after));
  return workflow.steps.filter((entry) => !waitedFor.has(entry.jobId));
}

/** The error for a workflow that will not succeed, naming the step that failed first (not one cancelled because of it). */
function failureOf(workflow: WorkflowRecord): WorkflowFailedError {
  const failures = workflow.steps.filter((entry) => entry.state === "dead" || entry.state === "cancelled");
  const first =
    failures.find((entry) => entry.errorCode !== "STINT_DEPENDENCY_FAILED" && entry.state === "dead") ??
    failures.find((entry) => entry.errorCode !== "STINT_DEPENDENCY_FAILED") ??
    failures[0];
  const state = workflow.cancelledAt === null ? "failed" : "cancelled";
  return new WorkflowFailedError(
    workflow.id,
    state,
    first === undefined
      ? null
      : { step: first.step, jobId: first.jobId, reason: `is ${first.state}${first.lastError === null ? "" : `: ${firstLine(first.lastError)}`}` },
  );
}

function firstLine(text: string): string {
  const end = text.indexOf("\n");
  return end === -1 ? text : text.slice(0, end);
}

/** The final steps' results by name (a list's in enqueue order), read in one call however many there are. */
async function resultsOf(
  store: JobStore,
  workflowId: string,
  finals: readonly WorkflowStepRecord[],
  lists: ReadonlySet<string> | undefined,
): Promise<Record<string, unknown>> {
  const rows = await store.readStepResults({ workflowId, jobIds: finals.map((entry) => entry.jobId) });
  const byId = new Map(rows.map((row) => [row.jobId, row.result]));
  const counts = new Map<string, number>();
  for (const entry of finals) counts.set(entry.step, (counts.get(entry.step) ?? 0) + 1);
  const results: Record<string, unknown> = {};
  for (const entry of finals) {
    const result = byId.get(entry.jobId) ?? null;
    if (counts.get(entry.step)! > 1 || lists?.has(entry.step) === true) ((results[entry.step] ??= []) as unknown[]).push(result);
    else results[entry.step] = result;
  }
  return results;
}
