import { JOB_STATES, type JobState, type WorkflowStepRecord } from "@stint/core";
import { formatCount, truncate } from "./table";
import { formatTime, humanDuration } from "./time-text";

/** Above this many same-named steps in one layer, `workflows show` prints one summary row for them (unless `--all`). */
export const SUMMARY_THRESHOLD = 5;

/**
 * Each step's layer: 0 for a step that waits for nothing, else one more
 * than the deepest step it waits for (the longest path from a root). A
 * dependency outside `steps` counts as a root. Iterative, so a long chain
 * of steps cannot overflow the stack.
 *
 * @example
 * ```ts
 * stepLayers(workflow.steps).get(report.jobId); // 2 for fetch -> summarise -> report
 * ```
 */
export function stepLayers(steps: readonly Pick<WorkflowStepRecord, "jobId" | "after">[]): Map<string, number> {
  const byId = new Map(steps.map((step) => [step.jobId, step]));
  const depth = new Map<string, number>();
  const expanded = new Set<string>();
  for (const start of steps) {
    const pending = [start.jobId];
    while (pending.length > 0) {
      const id = pending[pending.length - 1]!;
      const after = (byId.get(id)?.after ?? []).filter((dep) => byId.has(dep));
      if (depth.has(id)) {
        pending.pop();
      } else if (!expanded.has(id)) {
        expanded.add(id);
        // A dependency expanded but without a depth is on the path: a cycle, which the store refuses; it counts as a root.
        pending.push(...after.filter((dep) => !expanded.has(dep)));
      } else {
        depth.set(id, after.length === 0 ? 0 : Math.max(...after.map((dep) => depth.get(dep) ?? -1)) + 1);
        pending.pop();
      }
    }
  }
  return depth;
}

/** One printed row of `workflows show`: one step, or the summary of many same-named steps of one layer. */
export interface StepRow {
  readonly layer: number;
  readonly steps: readonly WorkflowStepRecord[];
}

/**
 * The rows of `workflows show`, by layer then first job id: the steps of
 * one name in one layer share a row when there are more than
 * {@link SUMMARY_THRESHOLD} of them, unless `all`.
 */
export function stepRows(steps: readonly WorkflowStepRecord[], layers: ReadonlyMap<string, number>, all: boolean): StepRow[] {
  const groups = new Map<string, { layer: number; steps: WorkflowStepRecord[] }>();
  for (const step of steps) {
    const layer = layers.get(step.jobId) ?? 0;
    const key = `${layer}\u0000${step.step}`;
    const group = groups.get(key) ?? { layer, steps: [] };
    group.steps.push(step);
    groups.set(key, group);
  }
  const rows = [...groups.values()].flatMap((group) =>
    all || group.steps.length <= SUMMARY_THRESHOLD ? group.steps.map((step) => ({ layer: group.layer, steps: [step] })) : [group],
  );
  return rows.sort((a, b) => a.layer - b.layer || compareIds(a.steps[0]!.jobId, b.steps[0]!.jobId));
}

/** The cells of one row: layer, step, job, queue, state, attempts, started, finished, duration, waits for, last error. */
export function stepCells(row: StepRow, names: ReadonlyMap<string, string>): string[] {
  const { steps } = row;
  const first = steps[0]!;
  const waits = waitsFor(steps, names);
  if (steps.length === 1) {
    return [
      String(row.layer),
      first.step,
      first.jobId,
      first.queue,
      first.state,
      String(first.attempts),
      formatTime(first.startedAt),
      formatTime(first.finishedAt),
      first.durationMs === null ? "-" : humanDuration(first.durationMs),
      waits,
      first.lastError === null ? "" : truncate(first.lastError, 60),
    ];
  }
  const ids = steps.map((step) => step.jobId).sort(compareIds);
  const queues = new Set(steps.map((step) => step.queue));
  const attempts = steps.map((step) => step.attempts);
  const started = steps.flatMap((step) => (step.startedAt === null ? [] : [step.startedAt.getTime()]));
  const finished = steps.flatMap((step) => (step.finishedAt === null ? [] : [step.finishedAt.getTime()]));
  const durations = steps.flatMap((step) => (step.durationMs === null ? [] : [step.durationMs]));
  const failing = steps.filter((step) => step.lastError !== null);
  return [
    String(row.layer),
    `${first.step} (${formatCount(steps.length)} steps)`,
    `${ids[0]}..${ids[ids.length - 1]}`,
    queues.size === 1 ? first.queue : `${queues.size} queues`,
    stateCounts(steps.map((step) => step.state)),
    Math.min(...attempts) === Math.max(...attempts) ? String(attempts[0]) : `${Math.min(...attempts)}-${Math.max(...attempts)}`,
    started.length === 0 ? "-" : formatTime(new Date(Math.min(...started))),
    // The list has finished only when every one of its steps has.
    finished.length < steps.length ? "-" : formatTime(new Date(Math.max(...finished))),
    durations.length === 0 ? "-" : `max ${humanDuration(Math.max(...durations))}`,
    waits,
    failing.length === 0
      ? ""
      : `job ${failing[0]!.jobId}: ${truncate(failing[0]!.lastError!, 50)}${failing.length > 1 ? ` (+${formatCount(failing.length - 1)})` : ""}`,
  ];
}

/**
 * Counts of states, most common first: `"990 succeeded, 10 dead"`.
 *
 * @example
 * ```ts
 * stateCounts(["dead", "succeeded", "succeeded"]); // "2 succeeded, 1 dead"
 * ```
 */
export function stateCounts(states: readonly JobState[] | Readonly<Partial<Record<JobState, number>>>): string {
  const counts: Partial<Record<JobState, number>> = {};
  if (isStateList(states)) for (const state of states) counts[state] = (counts[state] ?? 0) + 1;
  else Object.assign(counts, states);
  return JOB_STATES.flatMap((state): [JobState, number][] => ((counts[state] ?? 0) > 0 ? [[state, counts[state]!]] : []))
    .sort((a, b) => b[1] - a[1])
    .map(([state, count]) => `${formatCount(count)} ${state}`)
    .join(", ");
}

function isStateList(states: readonly JobState[] | Readonly<Partial<Record<JobState, number>>>): states is readonly JobState[] {
  return Array.isArray(states);
}

/** What the steps of a row wait for, by step name, a list with its size: `"extract, pages ×1,000"`. */
function waitsFor(steps: readonly WorkflowStepRecord[], names: ReadonlyMap<string, string>): string {
  const ids = new Set(steps.flatMap((step) => step.after));
  if (ids.size === 0) return "-";
  const perName = new Map<string, number>();
  for (const id of ids) {
    const name = names.get(id) ?? `job ${id}`;
    perName.set(name, (perName.get(name) ?? 0) + 1);
  }
  return [...perName].map(([name, count]) => (count === 1 ? name : `${name} ×${formatCount(count)}`)).join(", ");
}

function compareIds(a: string, b: string): number {
  return a.length - b.length || (a < b ? -1 : a > b ? 1 : 0);
}
