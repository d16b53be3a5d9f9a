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
  /** Only workflows older than this id: the page after one that ended there. */
  readonly beforeId?: string;
  readonly raw: Readonly<Record<"state" | "name", string>>;
}

/** The workflows page: its filter and the newest workflows that pass it. */
export interface WorkflowsList {
  readonly filter: WorkflowsFilter;
  readonly workflows: readonly WorkflowSummary[];
  /** The `before` of the next (older) page, or `null` when this page is the last. */
  readonly nextBeforeId: string | null;
}

/**
 * Reads the workflows page's query: `state` (running, succeeded, failed or
 * cancelled), `name` and `before` (a workflow id: the older page); empty
 * fields are no filter, a malformed one a 400 naming it.
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
  const before = (query.get("before") ?? "").trim();
  if (before !== "" && !isWorkflowId(before)) throw badParameter("before", "must be a workflow id");
  return Object.freeze({
    ...(raw.state === "" ? {} : { state: raw.state as WorkflowState }),
    ...(raw.name === "" ? {} : { name: raw.name }),
    ...(before === "" ? {} : { beforeId: before }),
    raw: Object.freeze(raw),
  });
}

/** A page of {@link WORKFLOWS_SHOWN} workflows that pass `filter`, newest first: one statement. */
export async function readWorkflowsList(sources: DashboardSources, filter: WorkflowsFilter): Promise<WorkflowsList> {
  const workflows = await sources.store.listWorkflows({
    limit: WORKFLOWS_SHOWN,
    ...(filter.state === undefined ? {} : { state: filter.state }),
    ...(filter.name === undefined ? {} : { name: filter.name }),
    ...(filter.beforeId === undefined ? {} : { beforeId: filter.beforeId }),
  });
  return Object.freeze({ filter, workflows, nextBeforeId: workflows.length === WORKFLOWS_SHOWN ? workflows[workflows.length - 1]!.id : null });
}

function isWorkflowId(id: string): boolean {
  return WORKFLOW_ID.test(id) && BigInt(id) <= 9_223_372_036_854_775_807n;
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
  const workflow = isWorkflowId(id) ? await sources.store.getWorkflow({ id }) : undefined;
  if (workflow === undefined) throw noSuchWorkflow(id);
  return workflow;
}

/** The 404 of an id that names no workflow. */
export function noSuchWorkflow(id: string): RequestRefused {
  return new RequestRefused(DashboardErrorCode.NotFound, `There is no workflow ${id.length > 40 ? `${id.slice(0, 40)}…` : id}.`);
}
