import { JOB_STATES } from "@stint/core";
import type { JobSummary } from "@stint/postgres-driver";
import { GROUP_WAITING_COUNT_CAP, type GroupSummary } from "@stint/core/driver";
import { COUNT_CAP, TOP_GROUPS, type JobsList } from "../data/jobs-list-data";
import { formatCapped, formatCount } from "../html/format";
import { timeElement } from "../html/format";
import { html, type Html } from "../html/html";
import { actionButton, layout, stateBadge } from "./layout";
import { href, queuePath, type PageContext } from "./page-context";

/** States whose jobs the row actions apply to (the job page offers the same). */
const RETRYABLE: readonly string[] = ["dead", "cancelled", "failed"];
const CANCELLABLE: readonly string[] = ["blocked", "queued", "failed", "running"];
const WAITING: readonly string[] = ["queued", "failed"];

/** The jobs list: the filter form, one page of jobs, and the link to the next page. */
export function jobsPage(context: PageContext, list: JobsList, flash?: string): Html {
  const { filter, page } = list;
  const raw = filter.raw;
  const title =
    filter.queue === undefined
      ? "Jobs"
      : filter.group !== undefined
        ? `Jobs of ${filter.queue}, group ${filter.group}`
        : filter.serialKey !== undefined
          ? `Jobs of ${filter.queue}, serial line ${filter.serialKey}`
          : `Jobs of ${filter.queue}`;
  return layout(context, {
    title,
    active: "jobs",
    flash,
    body: html`<h1>${title}</h1>
<form class="filters" method="get" action="${href(context, "/jobs")}">
  <label>Queue <input name="queue" value="${raw.queue}" maxlength="128" placeholder="any"></label>
  <label>State <select name="state"><option value="">any</option>${[...JOB_STATES, "scheduled"].map(
    (state) => html`<option${state === raw.state ? html` selected` : ""}>${state}</option>`,
  )}</select></label>
  <label>Error contains <input name="q" value="${raw.q}" maxlength="200" placeholder="text in the last error"></label>
  <label>Group <input name="group" value="${raw.group}" maxlength="256" placeholder="any (of the queue)"></label>
  <label>Serial key <input name="line" value="${raw.line}" maxlength="256" placeholder="any (of the queue)"></label>
  <label>Created from <input type="datetime-local" name="from" value="${raw.from}"></label>
  <label>to <input type="datetime-local" name="to" value="${raw.to}"></label>
  <input type="hidden" name="tz" value="0" data-tz-offset>
  <button class="button">Filter</button>
  <a href="${href(context, "/jobs")}">Clear</a>
</form>
${list.groups === undefined ? "" : groupsSection(context, filter.queue!, list.groups)}
<p class="summary" data-summary>${summary(list)}</p>
${bulkActions(context, list)}
${page.jobs.length === 0 ? html`<p class="empty">No jobs match.</p>` : jobsTable(context, page.jobs, href(context, "/jobs", { ...rawQuery(list), ...cursorQuery(list) }))}
<nav class="pager" aria-label="Pages">
  ${filter.beforeId === undefined && filter.afterId === undefined ? "" : html`<a href="${href(context, "/jobs", rawQuery(list))}" data-page="newest">« Newest</a>`}
  ${page.newerAfterId === null ? "" : html`<a rel="prev" href="${href(context, "/jobs", { ...rawQuery(list), after: page.newerAfterId })}" data-page="newer">← Newer</a>`}
  ${
    page.nextBeforeId === null
      ? ""
      : html`<a rel="next" href="${href(context, "/jobs", { ...rawQuery(list), before: page.nextBeforeId })}" data-page="older">${
          page.searched !== null && page.jobs.length < 50 ? "Search older jobs" : "Older"
        } →</a>`
  }
</nav>`,
  });
}

function summary(list: JobsList): Html {
  const { page, total, filter } = list;
  const paged = filter.beforeId !== undefined || filter.afterId !== undefined;
  if (page.searched !== null) {
    const { scanned, matched, complete } = page.searched;
    return html`${formatCount(matched)} ${matched === 1 ? "match" : "matches"} among ${formatCount(scanned)} jobs next to this page that pass the other filters${
      complete ? "." : html`; <strong>further jobs were not searched yet</strong>.`
    }`;
  }
  if (total.kind === "unknown") {
    const shown = page.jobs.length;
    return html`${formatCount(shown)} matching ${shown === 1 ? "job" : "jobs"} on this page${
      page.nextBeforeId === null ? "" : ", more further on"
    }; jobs matched by time, error text or group are not counted.`;
  }
  const count =
    total.estimate !== undefined ? `about ${formatCount(total.estimate)}` : total.atLeast ? formatCapped(total.jobs + 1, COUNT_CAP) : formatCount(total.jobs);
  return html`${count} ${total.jobs === 1 && !total.atLeast ? "job" : "jobs"}${paged ? " in all" : ""}.`;
}

/**
 * One row per job. Each cell names its column (`data-label`) for the
 * narrow layout, where rows become cards; "Run at" shows when a job on the
 * page waits, and the actions column unless the dashboard is read-only.
 */
function jobsTable(context: PageContext, jobs: readonly JobSummary[], back: string): Html {
  const now = Date.now();
  const showRunAt = jobs.some((job) => WAITING.includes(job.state));
  const showActions = !context.readOnly;
  const showGroup = jobs.some((job) => job.group !== null || job.serialKey !== null);
  return html`<div class="table-wrap cards"><table class="jobs">
<thead><tr><th scope="col" class="num">Id</th><th scope="col">Queue</th>${showGroup ? html`<th scope="col">Group</th>` : ""}<th scope="col">State</th><th scope="col" class="num">Attempts</th>
${showRunAt ? html`<th scope="col">Run at</th>` : ""}<th scope="col">Created</th><th scope="col">Finished</th><th scope="col">Last error</th>${
    showActions ? html`<th scope="col">Actions</th>` : ""
  }</tr></thead>
<tbody>
${jobs.map(
  (job) => html`<tr data-job-id="${job.id}" data-state="${job.state}">
<td class="num" data-label="Id"><a href="${href(context, `/jobs/${job.id}`)}">${job.id}</a></td>
<td data-label="Queue">${job.queue}</td>
${showGroup ? html`<td data-label="Group" data-col="group">${groupLink(context, job.queue, job)}</td>` : ""}
<td data-label="State">${stateBadge(job.state)}${WAITING.includes(job.state) && job.runAt.getTime() > now ? html` <span class="badge" data-scheduled>scheduled</span>` : ""}</td>
<td class="num" data-label="Attempts">${job.attempts}/${job.maxAttempts}</td>
${showRunAt ? html`<td data-label="Run at" data-col="run-at">${WAITING.includes(job.state) ? timeElement(job.runAt) : html`<span class="muted">–</span>`}</td>` : ""}
<td data-label="Created">${timeElement(job.createdAt)}</td>
<td data-label="Finished">${timeElement(job.finishedAt)}</td>
<td class="error-head" data-label="Last error">${job.errorHead === null ? html`<span class="muted">–</span>` : firstLine(job.errorHead)}</td>
${showActions ? html`<td class="actions" data-label="Actions">${rowActions(context, job, back, now)}</td>` : ""}
</tr>`,
)}
</tbody></table></div>`;
}

/** Retry, run now and cancel for one row, as the job page offers them; each comes back to this list. */
function rowActions(context: PageContext, job: JobSummary, back: string, now: number): Html {
  const fields = { back };
  const actions: Html[] = [];
  if (WAITING.includes(job.state) && job.runAt.getTime() > now) {
    actions.push(actionButton(context, { path: `/jobs/${job.id}/run-now`, label: "Run now", fields }));
  }
  if (RETRYABLE.includes(job.state)) actions.push(actionButton(context, { path: `/jobs/${job.id}/retry`, label: "Retry", fields }));
  if (CANCELLABLE.includes(job.state)) {
    actions.push(
      actionButton(context, {
        path: `/jobs/${job.id}/cancel`,
        label: "Cancel",
        danger: true,
        fields,
        confirm: job.state === "running" ? `Cancel job ${job.id}? It is running: its handler is told to stop now.` : `Cancel job ${job.id}?`,
      }),
    );
  }
  return actions.length === 0 ? html`<span class="muted">–</span>` : html`${actions.map((action, index) => html`${index === 0 ? "" : " "}${action}`)}`;
}

/**
 * The actions on every job the filter matches, offered only when the
 * filter is exactly a queue and a state a queue-wide action covers (so the
 * action touches that set and nothing else); each opens a page that states
 * the count and asks before doing anything.
 */
function bulkActions(context: PageContext, list: JobsList): Html {
  const { filter } = list;
  if (context.readOnly || filter.queue === undefined || filter.state === undefined) return html``;
  const narrowed =
    filter.errorText !== undefined ||
    filter.createdFrom !== undefined ||
    filter.createdTo !== undefined ||
    filter.scheduled === true ||
    filter.raw.q !== "" ||
    filter.group !== undefined ||
    filter.serialKey !== undefined;
  if (narrowed || (list.page.jobs.length === 0 && filter.beforeId === undefined)) return html``;
  const queue = queuePath(filter.queue);
  if (filter.state === "dead") {
    return html`<p class="bulk" data-bulk><a class="button danger" href="${href(context, `${queue}/retry-dead`)}">Retry all dead jobs of ${filter.queue}…</a></p>`;
  }
  if (filter.state === "queued" || filter.state === "failed") {
    const label = filter.state === "queued" ? "queued" : "retrying";
    return html`<p class="bulk" data-bulk><a class="button danger" href="${href(context, `${queue}/cancel-waiting`, { states: filter.state })}">Cancel all ${label} jobs of ${filter.queue}…</a></p>`;
  }
  return html``;
}

function firstLine(text: string): string {
  const line = text.split("\n")[0] ?? "";
  return line.length > 160 ? `${line.slice(0, 160)}…` : line;
}

/** The cursor of this page, to come back to it after a row action. */
function cursorQuery(list: JobsList): Record<string, string | undefined> {
  return { before: list.filter.beforeId, after: list.filter.afterId };
}

function rawQuery(list: JobsList): Record<string, string> {
  const { raw } = list.filter;
  return {
    queue: raw.queue,
    state: raw.state,
    q: raw.q,
    group: raw.group,
    line: raw.line,
    from: raw.from,
    to: raw.to,
    tz: raw.from === "" && raw.to === "" ? "" : raw.tz,
  };
}

/** A job's group (or serial key, marked "line"), linked to the list of that group's jobs; a dash for neither. */
function groupLink(context: PageContext, queue: string, job: { readonly group: string | null; readonly serialKey: string | null }): Html {
  if (job.group !== null) return html`<a href="${href(context, "/jobs", { queue, group: job.group })}" data-group>${job.group}</a>`;
  if (job.serialKey !== null) return html`line <a href="${href(context, "/jobs", { queue, line: job.serialKey })}" data-line>${job.serialKey}</a>`;
  return html`<span class="muted">–</span>`;
}

/**
 * A queue's cap per group and its busiest groups and serial lines (most
 * running first, then most waiting), each linked to its jobs; a held line
 * links the dead job that holds it. Shown when the queue has groups or a
 * cap per group.
 */
function groupsSection(context: PageContext, queue: string, groups: NonNullable<JobsList["groups"]>): Html {
  const cap = groups.controls?.maxRunningPerGroup ?? null;
  if (groups.busiest.length === 0 && cap === null) return html``;
  const capText =
    cap === null
      ? html`No cap per group (<code>stint limit ${queue} --max-running-per-group N</code> sets one).`
      : html`At most <strong data-max-running-per-group>${formatCount(cap)}</strong> running per group.`;
  return html`<section class="groups" data-groups>
<h2>Groups</h2>
<p>${capText}</p>
${
  groups.busiest.length === 0
    ? html`<p class="empty">No group has running or waiting jobs.</p>`
    : html`<div class="table-wrap cards"><table class="groups">
<thead><tr><th scope="col">Group</th><th scope="col" class="num">Running</th><th scope="col" class="num">Waiting</th><th scope="col">Held by</th></tr></thead>
<tbody>
${groups.busiest.map((group) => groupRow(context, queue, group))}
</tbody></table></div>
<p class="note muted">The ${formatCount(TOP_GROUPS)} busiest at most: most running first, then most waiting (counted up to ${formatCount(GROUP_WAITING_COUNT_CAP)} a group).</p>`
}
</section>`;
}

function groupRow(context: PageContext, queue: string, group: GroupSummary): Html {
  const waiting = group.waiting === null ? "–" : group.waiting >= GROUP_WAITING_COUNT_CAP ? `${formatCount(group.waiting)}+` : formatCount(group.waiting);
  return html`<tr data-group-key="${group.key}">
<td data-label="Group">${groupLink(context, queue, group.serial ? { group: null, serialKey: group.key } : { group: group.key, serialKey: null })}</td>
<td class="num" data-label="Running">${formatCount(group.running)}</td>
<td class="num" data-label="Waiting">${waiting}</td>
<td data-label="Held by">${group.heldBy === null ? html`<span class="muted">–</span>` : html`<a href="${href(context, `/jobs/${group.heldBy}`)}" data-held-by>Job ${group.heldBy}</a>`}</td>
</tr>`;
}
