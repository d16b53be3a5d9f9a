import { formatRateLimit } from "@stint/core/internal";
import { formatCount, formatDuration } from "../html/format";
import { html, type Html } from "../html/html";
import { THROUGHPUT_BUCKET_SHARE, type Overview, type QueueRow } from "../data/overview-data";
import { actionButton, layout } from "./layout";
import { href, queuePath, type PageContext } from "./page-context";
import { sparkline } from "./sparkline";

/** The overview: one row per queue, refreshed in place by the script. */
export function overviewPage(context: PageContext, overview: Overview, flash?: string): Html {
  return layout(context, {
    title: "Overview",
    active: "overview",
    flash,
    body: html`<h1>Queues</h1>
<section id="overview" data-refresh="${href(context, "/fragments/overview")}" data-refresh-ms="${context.refreshMs}"${
      context.liveEvents ? html` data-events="${href(context, "/events")}"` : ""
    } aria-live="polite">
${overviewFragment(context, overview)}
</section>`,
  });
}

/** The part of the overview the script fetches and swaps every few seconds. */
export function overviewFragment(context: PageContext, overview: Overview): Html {
  if (overview.queues.length === 0) return html`<p class="empty">No jobs yet.</p>`;
  const { throughput } = overview;
  return html`<div class="table-wrap cards"><table class="queues">
<thead><tr>
<th scope="col">Queue</th><th scope="col" class="num">Queued</th><th scope="col" class="num">Due</th><th scope="col" class="num">Running</th>
<th scope="col" class="num">Retrying</th><th scope="col" class="num">Dead</th><th scope="col" class="num">Succeeded 1 h</th>
<th scope="col" class="num">Oldest due</th><th scope="col">Last hour</th><th scope="col">Controls</th>${context.readOnly ? "" : html`<th scope="col">Actions</th>`}
</tr></thead>
<tbody>
${overview.queues.map((row) => queueRow(context, row, throughput.coversWindow))}
</tbody></table></div>
<p class="note muted">${
    throughput.coversWindow
      ? "Succeeded and the chart count every job that succeeded in the last hour."
      : html`Succeeded and the chart count at most ${formatCount(THROUGHPUT_BUCKET_SHARE)} jobs per five minutes, ${formatCount(throughput.scanned)} in all; <strong>more succeeded than that, so the figures are lower bounds.</strong>`
  }
Updated <time datetime="${new Date().toISOString()}" data-relative>now</time>.</p>`;
}

function queueRow(context: PageContext, row: QueueRow, covered: boolean): Html {
  const controls = row.controls;
  const paused = controls?.paused === true;
  const jobsOf = (state?: string) => href(context, "/jobs", { queue: row.queue, state });
  return html`<tr data-queue="${row.queue}"${paused ? html` class="paused"` : ""}>
<th scope="row" data-label="Queue"><a href="${jobsOf()}">${row.queue}</a></th>
<td class="num" data-col="queued" data-label="Queued"><a href="${jobsOf("queued")}">${formatCount(row.queued)}</a></td>
<td class="num" data-col="due" data-label="Due">${formatCount(row.due)}</td>
<td class="num" data-col="running" data-label="Running"><a href="${jobsOf("running")}">${formatCount(row.running)}</a></td>
<td class="num" data-col="retrying" data-label="Retrying"><a href="${jobsOf("failed")}">${formatCount(row.retrying)}</a></td>
<td class="num${row.dead > 0 ? " bad" : ""}" data-col="dead" data-label="Dead"><a href="${jobsOf("dead")}">${formatCount(row.dead)}</a></td>
<td class="num" data-col="succeeded" data-label="Succeeded 1 h"><a href="${jobsOf("succeeded")}">${covered ? "" : "≥ "}${formatCount(row.succeededLastHour)}</a></td>
<td class="num" data-col="oldest-due" data-label="Oldest due">${row.oldestDueAgeMs === null ? html`<span class="muted">–</span>` : formatDuration(row.oldestDueAgeMs)}</td>
<td data-label="Last hour">${sparkline(row.buckets, `${row.queue}: succeeded per 5 minutes`)}</td>
<td data-col="controls" data-label="Controls">${describeControls(row)}</td>
${
  context.readOnly
    ? ""
    : html`<td class="actions" data-label="Actions">${
        paused
          ? actionButton(context, { path: `${queuePath(row.queue)}/resume`, label: "Resume" })
          : actionButton(context, {
              path: `${queuePath(row.queue)}/pause`,
              label: "Pause",
              confirm: `Pause queue ${row.queue}? Running jobs finish; no new ones start.`,
            })
      }${row.dead > 0 ? html` <a class="button" href="${href(context, `${queuePath(row.queue)}/retry-dead`)}">Retry dead</a>` : ""}${
        row.queued + row.retrying > 0 ? html` <a class="button" href="${href(context, `${queuePath(row.queue)}/cancel-waiting`)}">Cancel waiting</a>` : ""
      }</td>`
}
</tr>`;
}

function describeControls(row: QueueRow): Html {
  const controls = row.controls;
  const parts: Html[] = [];
  if (controls?.paused === true) parts.push(html`<span class="badge warn">paused</span>`);
  if (controls?.maxRunning != null) parts.push(html`<span class="badge">max ${formatCount(controls.maxRunning)} running</span>`);
  if (controls?.maxRunningPerGroup != null) parts.push(html`<span class="badge">max ${formatCount(controls.maxRunningPerGroup)} per group</span>`);
  if (controls?.rateLimit != null) parts.push(html`<span class="badge">${formatRateLimit(controls.rateLimit)}</span>`);
  return parts.length === 0 ? html`<span class="muted">–</span>` : html`${parts}`;
}
