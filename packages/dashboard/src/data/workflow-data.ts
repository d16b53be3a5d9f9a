import type { WorkflowRecord, WorkflowState, WorkflowSummary } from "@stint/core";
import { assertWorkflowName } from "@stint/core/internal";
import { badParameter, DashboardErrorCode, RequestRefused } from "../http/request-refused";
import type { DashboardSources } from "./dashboard-sources";

/** How many workflows the list shows: the newest. */
export const WORKFLOWS_SHOWN = 100;

/** The states a workflow can be filtered by. */
export const WORKFLOW_STATES: readonly WorkflowState[] = Object.freeze(["running", "succeeded", "failed", "cancelled"]);

const WORKFLOW_ID = /^[1-9][0-9]{0,18}$/;

/** The filters of the workflows page, checked, and the texts as given. */
export interface WorkflowsFilter {
  readonly state?: WorkflowState;
  readonly name?: string;
  readonly raw: Readonly<Record<"state" | "name", string>>;
}

/** The workflows page: its filter and the newest workflows that pass it. */
export interface WorkflowsList {
  readonly filter: WorkflowsFilter;
  readonly workflows: readonly WorkflowSummary[];
}

/**
 * Reads the workflows page's query: `state` (running, succeeded, failed or
 * cancelled) and `name`; empty fields are no filter, a malformed one a 400
 * naming it.
 *
 * @example
 * ```ts
 * parseWorkflowsFilter(new URLSearchParams("state=failed")); // { state: "failed", raw: { state: "failed", name: "" } }
 * ```
 */
export function parseWorkflowsFilter(query: URLSearchParams): WorkflowsFilter {
  const raw = { state: (query.get("state") ?? "").trim(), name: (query.get("name") ?? "").trim() };
  if (raw.state !== "" && !(WORKFLOW_STATES as readonly string[]).includes(raw.state)) {
    throw badParameter("state", `must be one of ${WORKFLOW_STATES.join(", ")}`);
  }
  if (raw.name !== "" && !isWorkflowName(raw.name)) throw badParameter("name", "must be a workflow name (letters, digits, _ . : -)");
  return Object.freeze({
    ...(raw.state === "" ? {} : { state: raw.state as WorkflowState }),
    ...(raw.name === "" ? {} : { name: raw.name }),
    raw: Object.freeze(raw),
  });
}

/** The newest {@link WORKFLOWS_SHOWN} workflows that pass `filter`: one statement. */
export async function readWorkflowsList(sources: DashboardSources, filter: WorkflowsFilter): Promise<WorkflowsList> {
  const workflows = await sources.store.listWorkflows({
    limit: WORKFLOWS_SHOWN,
    ...(filter.state === undefined ? {} : { state: filter.state }),
    ...(filter.name === undefined ? {} : { name: filter.name }),
  });
  return Object.freeze({ filter, workflows });
}

function isWorkflowName(name: string): boolean {
  try {
    assertWorkflowName(name);
    return true;
  } catch {
    return false;
  }
}

/** A workflow with its steps; a 404 when there is no such workflow (or the id cannot be one). */
export async function readWorkflow(sources: DashboardSources, id: string): Promise<WorkflowRecord> {
  const workflow = WORKFLOW_ID.test(id) && BigInt(id) <= 9_223_372_036_854_775_807n ? await sources.store.getWorkflow({ id }) : undefined;
  if (workflow === undefined) throw noSuchWorkflow(id);
  return workflow;
}

/** The 404 of an id that names no workflow. */
export function noSuchWorkflow(id: string): RequestRefused {
  return new RequestRefused(DashboardErrorCode.NotFound, `There is no workflow ${id.length > 40 ? `${id.slice(0, 40)}…` : id}.`);
}
