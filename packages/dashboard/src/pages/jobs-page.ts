import { JOB_STATES } from "@stint/core";
import type { JobSummary } from "@stint/postgres-driver";
import { COUNT_CAP, type JobsList } from "../data/jobs-list-data";
import { formatCapped, formatCount } from "../html/format";
import { timeElement } from "../html/format";
import { html, type Html } from "../html/html";
import { layout, stateBadge } from "./layout";
import { href, type PageContext } from "./page-context";

/** The jobs list: the filter form, one page of jobs, and the link to the next page. */
export function jobsPage(context: PageContext, list: JobsList): Html {
  const { filter, page } = list;
  const raw = filter.raw;
  const title = filter.queue === undefined ? "Jobs" : `Jobs of ${filter.queue}`;
  return layout(context, {
    title,
    active: "jobs",
    body: html`<h1>${title}</h1>
<form class="filters" method="get" action="${href(context, "/jobs")}">
  <label>Queue <input name="queue" value="${raw.queue}" maxlength="128" placeholder="any"></label>
  <label>State <select name="state"><option value="">any</option>${JOB_STATES.map(
    (state) => html`<option${state === raw.state ? html` selected` : ""}>${state}</option>`,
  )}</select></label>
  <label>Error contains <input name="q" value="${raw.q}" maxlength="200" placeholder="text in the last error"></label>
  <label>Created from <input type="datetime-local" name="from" value="${raw.from}"></label>
  <label>to <input type="datetime-local" name="to" value="${raw.to}"></label>
  <input type="hidden" name="tz" value="0" data-tz-offset>
  <button class="button">Filter</button>
  <a href="${href(context, "/jobs")}">Clear</a>
</form>
<p class="summary" data-summary>${summary(list)}</p>
${page.jobs.length === 0 ? html`<p class="empty">No jobs match.</p>` : jobsTable(context, page.jobs)}
<nav class="pager">
  ${filter.beforeId === undefined ? "" : html`<a href="${href(context, "/jobs", { ...rawQuery(list), before: undefined })}">Newest</a>`}
  ${
    page.nextBeforeId === null
      ? ""
      : html`<a rel="next" href="${href(context, "/jobs", { ...rawQuery(list), before: page.nextBeforeId })}">${
          page.searched !== null && page.jobs.length < 50 ? "Search older jobs" : "Older"
        } →</a>`
  }
</nav>`,
  });
}

function summary(list: JobsList): Html {
  const { page, total } = list;
  if (page.searched === null) {
    return html`${formatCapped(total ?? 0, COUNT_CAP)} ${total === 1 ? "job" : "jobs"}${list.filter.beforeId === undefined ? "" : " in all; showing older ones"}.`;
  }
  const { scanned, matched, complete } = page.searched;
  return html`${formatCount(matched)} ${matched === 1 ? "match" : "matches"} among the ${formatCount(scanned)} newest jobs${
    list.filter.beforeId === undefined ? "" : html` below job ${list.filter.beforeId}`
  } that pass the state filter${complete ? "." : html`; <strong>older jobs were not searched yet</strong>.`}`;
}

function jobsTable(context: PageContext, jobs: readonly JobSummary[]): Html {
  return html`<div class="table-wrap"><table class="jobs">
<thead><tr><th scope="col" class="num">Id</th><th scope="col">Queue</th><th scope="col">State</th><th scope="col" class="num">Attempts</th>
<th scope="col">Created</th><th scope="col">Finished</th><th scope="col">Last error</th></tr></thead>
<tbody>
${jobs.map(
  (job) => html`<tr data-job-id="${job.id}">
<td class="num"><a href="${href(context, `/jobs/${job.id}`)}">${job.id}</a></td>
<td>${job.queue}</td>
<td>${stateBadge(job.state)}</td>
<td class="num">${job.attempts}/${job.maxAttempts}</td>
<td>${timeElement(job.createdAt)}</td>
<td>${timeElement(job.finishedAt)}</td>
<td class="error-head">${job.errorHead === null ? html`<span class="muted">–</span>` : firstLine(job.errorHead)}</td>
</tr>`,
)}
</tbody></table></div>`;
}

function firstLine(text: string): string {
  const line = text.split("\n")[0] ?? "";
  return line.length > 160 ? `${line.slice(0, 160)}…` : line;
}

function rawQuery(list: JobsList): Record<string, string> {
  const { raw } = list.filter;
  return { queue: raw.queue, state: raw.state, q: raw.q, from: raw.from, to: raw.to, tz: raw.from === "" && raw.to === "" ? "" : raw.tz };
}
