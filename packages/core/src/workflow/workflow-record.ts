import type { JobState } from "../job/job-state";

/**
 * Where a workflow stands, derived from its steps:
 *
 * - `running`: a step is still to run (blocked, queued, running or waiting for a retry);
 * - `succeeded`: every step succeeded;
 * - `failed`: nothing is left to run and a step is dead, or was cancelled because one was;
 * - `cancelled`: an operator cancelled the workflow, and nothing is left to run.
 */
export type WorkflowState = "running" | "succeeded" | "failed" | "cancelled";

/** A workflow at a glance: what `listWorkflows` returns. */
export interface WorkflowSummary {
  readonly id: string;
  readonly name: string;
  readonly state: WorkflowState;
  readonly createdAt: Date;
  /** When its last step finished; `null` while it runs. */
  readonly finishedAt: Date | null;
  /** How many of its steps are in each state. */
  readonly counts: Readonly<Partial<Record<JobState, number>>>;
  readonly stepCount: number;
}

/** One step of a workflow as `getWorkflow` returns it. */
export interface WorkflowStepRecord {
  readonly jobId: string;
  /** The step's name (shared by every step of a list). */
  readonly step: string;
  readonly queue: string;
  readonly state: JobState;
  /** The ids of the jobs it waits for. */
  readonly after: readonly string[];
  /** Whether it runs even when a step it waits for fails. */
  readonly ignoreFailedDependencies: boolean;
  readonly attempts: number;
  readonly createdAt: Date;
  readonly startedAt: Date | null;
  readonly finishedAt: Date | null;
  readonly durationMs: number | null;
  readonly lastError: string | null;
  readonly errorCode: string | null;
}

/** A workflow with every step: what `getWorkflow` returns. */
export interface WorkflowRecord extends WorkflowSummary {
  /** When an operator cancelled it, or `null`. */
  readonly cancelledAt: Date | null;
  /** Its steps in id (enqueue) order. */
  readonly steps: readonly WorkflowStepRecord[];
}

/**
 * A workflow's state from the states of its steps and whether an
 * operator cancelled it (see {@link WorkflowState}).
 *
 * @example
 * ```ts
 * workflowState({ succeeded: 3, blocked: 1 }, false); // "running"
 * workflowState({ succeeded: 3, dead: 1 }, false);    // "failed"
 * ```
 */
export function workflowState(counts: Readonly<Partial<Record<JobState, number>>>, cancelled: boolean): WorkflowState {
  const active = (counts.blocked ?? 0) + (counts.queued ?? 0) + (counts.running ?? 0) + (counts.failed ?? 0);
  if (active > 0) return "running";
  if (cancelled) return "cancelled";
  return (counts.dead ?? 0) + (counts.cancelled ?? 0) > 0 ? "failed" : "succeeded";
}
