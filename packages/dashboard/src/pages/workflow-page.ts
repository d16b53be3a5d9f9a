import type { WorkflowRecord, WorkflowState, WorkflowStepRecord, WorkflowSummary } from "@stint/core";
import { WORKFLOW_STATES, type WorkflowsList } from "../data/workflow-data";
import { formatCount, formatDuration, timeElement } from "../html/format";
import { html, type Html } from "../html/html";
import { actionButton, layout, stateBadge } from "./layout";
import { href, type PageContext } from "./page-context";
import { countsText, layoutWorkflow, workflowGraphSvg, type GraphNode } from "./workflow-graph";

/** The members of a node of many steps that its row lists, those that did not succeed first. */
const MEMBERS_LISTED = 50;

/**
 * A workflow's state as a coloured label: a failed workflow in the colour
 * of dead jobs (a step of it is dead), a running one as running jobs.
 */
export function workflowBadge(state: WorkflowState): Html {
  return html`<span class="state state-wf-${state}" data-workflow-state>${state}</span>`;
}

/**
 * One workflow: its state and fields, a cancel button while it runs, the
 * layered graph of its steps (server-drawn SVG, see `layoutWorkflow`) and
 * a table with a row per node of the graph. Refreshed in place while it runs.
 */
export function workflowPage(context: PageContext, workflow: WorkflowRecord, flash?: string): Html {
  const graph = layoutWorkflow(workflow.steps);
  const names = new Map(workflow.steps.map((step) => [step.jobId, step.step]));
  const running = workflow.state === "running";
  return layout(context, {
    title: `Workflow ${workflow.id}`,
    active: "workflows",
    flash,
    body: html`<p class="crumbs"><a href="${href(context, "/workflows", { name: workflow.name })}">Workflows named ${workflow.name}</a></p>
<div id="workflow-live"${running ? html` data-refresh="${href(context, `/workflows/${workflow.id}`)}" data-refresh-ms="${context.refreshMs}" data-refresh-part="workflow-live"` : ""}>
<h1>Workflow ${workflow.id} ${workflowBadge(workflow.state)}</h1>
<div class="actions" data-actions>
${
  running
    ? actionButton(context, {
        path: `/workflows/${workflow.id}/cancel`,
        label: "Cancel workflow",
        danger: true,
        confirm: `Cancel workflow ${workflow.id} (${workflow.name})? Its steps that have not finished are cancelled; running ones are told to stop.`,
      })
    : ""
}
</div>
<dl class="fields">
<dt>Name</dt><dd>${workflow.name}</dd>
<dt>Steps</dt><dd data-step-counts>${formatCount(workflow.stepCount)}: ${countsText(workflow.steps)}</dd>
<dt>Created</dt><dd>${timeElement(workflow.createdAt)}</dd>
<dt>Finished</dt><dd>${timeElement(workflow.finishedAt)}</dd>
${workflow.cancelledAt === null ? "" : html`<dt>Cancelled</dt><dd>${timeElement(workflow.cancelledAt)}</dd>`}
</dl>
<h2>Graph</h2>
<p class="note muted">Each layer waits for the layers above it; more than a few steps of one name in a layer are one box. A box links to its step's job.</p>
${workflowGraphSvg(context, graph, `Steps of workflow ${workflow.id}`)}
<h2>Steps</h2>
<div class="table-wrap cards"><table class="steps">
<thead><tr><th scope="col" class="num">Layer</th><th scope="col">Step</th><th scope="col">State</th><th scope="col" class="num">Attempts</th><th scope="col">Started</th>
<th scope="col">Finished</th><th scope="col" class="num">Duration</th><th scope="col">Waits for</th><th scope="col">Last error</th></tr></thead>
<tbody>
${graph.nodes.map((node) => stepRow(context, node, names))}
</tbody></table></div>
<p class="note muted">Updated <time datetime="${new Date().toISOString()}" data-relative>now</time>.</p>
</div>`,
  });
}

function stepRow(context: PageContext, node: GraphNode, names: ReadonlyMap<string, string>): Html {
  const single = node.steps.length === 1 ? node.steps[0]! : undefined;
  const waits = waitsFor(node.steps, names);
  if (single !== undefined) {
    return html`<tr id="steps-${node.key}" data-step-row="${node.key}">
<td class="num" data-label="Layer">${node.layer}</td>
<td data-label="Step"><a href="${href(context, `/jobs/${single.jobId}`)}">${single.step}</a> <span class="muted">job ${single.jobId}</span></td>
<td data-label="State">${stateBadge(single.state)}</td>
<td class="num" data-label="Attempts">${single.attempts}</td>
<td data-label="Started">${timeElement(single.startedAt)}</td>
<td data-label="Finished">${timeElement(single.finishedAt)}</td>
<td class="num" data-label="Duration">${single.durationMs === null ? "–" : formatDuration(single.durationMs)}</td>
<td data-label="Waits for">${waits}</td>
<td class="error-head" data-label="Last error">${single.lastError === null ? html`<span class="muted">–</span>` : firstLine(single.lastError)}</td>
</tr>`;
  }
  const notDone = node.steps.filter((step) => step.state !== "succeeded");
  const listed = [...notDone, ...node.steps.filter((step) => step.state === "succeeded")].slice(0, MEMBERS_LISTED);
  const durations = node.steps.flatMap((step) => (step.durationMs === null ? [] : [step.durationMs]));
  const failing = node.steps.find((step) => step.lastError !== null);
  return html`<tr id="steps-${node.key}" data-step-row="${node.key}">
<td class="num" data-label="Layer">${node.layer}</td>
<td data-label="Step"><details><summary>${node.name ?? "Other steps"} <span class="muted">${formatCount(node.steps.length)} steps</span></summary>
<ul class="members">${listed.map(
    (step) =>
      html`<li><a href="${href(context, `/jobs/${step.jobId}`)}">Job ${step.jobId}</a> ${node.name === null ? html`${step.step} ` : ""}${stateBadge(step.state)}</li>`,
  )}${node.steps.length > listed.length ? html`<li class="muted">and ${formatCount(node.steps.length - listed.length)} more that succeeded</li>` : ""}</ul></details></td>
<td data-label="State">${countsText(node.steps)}</td>
<td class="num" data-label="Attempts">${Math.max(...node.steps.map((step) => step.attempts))} at most</td>
<td data-label="Started">${timeElement(earliest(node.steps.map((step) => step.startedAt)))}</td>
<td data-label="Finished">${notDone.some((step) => step.finishedAt === null) ? timeElement(null) : timeElement(latest(node.steps.map((step) => step.finishedAt)))}</td>
<td class="num" data-label="Duration">${durations.length === 0 ? "–" : `≤ ${formatDuration(Math.max(...durations))}`}</td>
<td data-label="Waits for">${waits}</td>
<td class="error-head" data-label="Last error">${failing === undefined ? html`<span class="muted">–</span>` : html`Job ${failing.jobId}: ${firstLine(failing.lastError!)}`}</td>
</tr>`;
}

/** The step names a node's steps wait for, a list with its size: `extract, pages ×1,000`. */
function waitsFor(steps: readonly WorkflowStepRecord[], names: ReadonlyMap<string, string>): Html {
  const perName = new Map<string, number>();
  for (const id of new Set(steps.flatMap((step) => step.after))) {
    const name = names.get(id) ?? `job ${id}`;
    perName.set(name, (perName.get(name) ?? 0) + 1);
  }
  if (perName.size === 0) return html`<span class="muted">–</span>`;
  return html`${[...perName].map(([name, count], index) => html`${index === 0 ? "" : ", "}${name}${count === 1 ? "" : ` ×${formatCount(count)}`}`)}`;
}

function earliest(dates: readonly (Date | null)[]): Date | null {
  const times = dates.flatMap((date) => (date === null ? [] : [date.getTime()]));
  return times.length === 0 ? null : new Date(Math.min(...times));
}

function latest(dates: readonly (Date | null)[]): Date | null {
  const times = dates.flatMap((date) => (date === null ? [] : [date.getTime()]));
  return times.length === 0 ? null : new Date(Math.max(...times));
}

function firstLine(text: string): string {
  const line = text.split("\n")[0] ?? "";
  return line.length > 160 ? `${line.slice(0, 160)}…` : line;
}

/** The workflows list: a filter by state and name, and the newest workflows that pass it. */
export function workflowsPage(context: PageContext, list: WorkflowsList, flash?: string): Html {
  const { raw } = list.filter;
  return layout(context, {
    title: "Workflows",
    active: "workflows",
    flash,
    body: html`<h1>Workflows</h1>
<form class="filters" method="get" action="${href(context, "/workflows")}">
  <label>State <select name="state"><option value="">any</option>${WORKFLOW_STATES.map(
    (state) => html`<option${state === raw.state ? html` selected` : ""}>${state}</option>`,
  )}</select></label>
  <label>Name <input name="name" value="${raw.name}" maxlength="200" placeholder="any"></label>
  <button class="button">Filter</button>
  <a href="${href(context, "/workflows")}">Clear</a>
</form>
${
  list.workflows.length === 0
    ? html`<p class="empty">No workflows match.</p>`
    : html`<div class="table-wrap cards"><table class="workflows">
<thead><tr><th scope="col" class="num">Id</th><th scope="col">Name</th><th scope="col">State</th><th scope="col" class="num">Done</th><th scope="col">Steps</th><th scope="col">Created</th><th scope="col">Finished</th></tr></thead>
<tbody>
${list.workflows.map((workflow) => workflowRow(context, workflow))}
</tbody></table></div>
<nav class="pager" aria-label="Pages">
  ${list.filter.beforeId === undefined ? "" : html`<a href="${href(context, "/workflows", raw)}" data-page="newest">« Newest</a>`}
  ${list.nextBeforeId === null ? "" : html`<a rel="next" href="${href(context, "/workflows", { ...raw, before: list.nextBeforeId })}" data-page="older">Older →</a>`}
</nav>`
}`,
  });
}

function workflowRow(context: PageContext, workflow: WorkflowSummary): Html {
  const counts = Object.entries(workflow.counts).filter(([, count]) => (count ?? 0) > 0);
  return html`<tr data-workflow-id="${workflow.id}" data-state="${workflow.state}">
<td class="num" data-label="Id"><a href="${href(context, `/workflows/${workflow.id}`)}">${workflow.id}</a></td>
<td data-label="Name">${workflow.name}</td>
<td data-label="State">${workflowBadge(workflow.state)}</td>
<td class="num" data-label="Done">${formatCount(workflow.counts.succeeded ?? 0)}/${formatCount(workflow.stepCount)}</td>
<td data-label="Steps">${counts.map(([state, count]) => html`${stateBadge(state)}${formatCount(count ?? 0)} `)}</td>
<td data-label="Created">${timeElement(workflow.createdAt)}</td>
<td data-label="Finished">${timeElement(workflow.finishedAt)}</td>
</tr>`;
}
