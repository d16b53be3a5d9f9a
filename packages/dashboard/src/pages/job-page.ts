import { ErrorCode, MAX_JOB_LOG_BYTES, MAX_JOB_LOG_LINES, type AttemptRecord, type JobRecord } from "@stint/core";
import { deadLetterLinks } from "@stint/core/internal";
import type { JobDetail, ShownJobLog } from "../data/job-detail-data";
import { formatDuration, timeElement } from "../html/format";
import { html, type Html } from "../html/html";
import { actionButton, layout, stateBadge } from "./layout";
import { href, type PageContext } from "./page-context";

const RETRYABLE = ["dead", "cancelled", "failed"];
const CANCELLABLE = ["blocked", "queued", "failed", "running"];
/** Jobs waiting for their `run_at`: a later one can be made due now. */
const WAITING = ["queued", "failed"];

/** One job: its fields, payload (redacted or hidden), result, meta, progress, every attempt and its handler's log lines per attempt. */
export function jobPage(context: PageContext, detail: JobDetail, flash?: string): Html {
  const { job } = detail;
  return layout(context, {
    title: `Job ${job.id}`,
    active: "jobs",
    flash,
    body: html`<p class="crumbs"><a href="${href(context, "/jobs", { queue: job.queue })}">Jobs of ${job.queue}</a></p>
<div id="job-live" data-refresh="${href(context, `/jobs/${job.id}`)}" data-refresh-ms="${context.refreshMs}" data-refresh-part="job-live"${
      context.liveEvents ? html` data-events="${href(context, "/events", { queues: job.queue, job: job.id })}"` : ""
    }>
<h1>Job ${job.id} ${stateBadge(job.state)}</h1>
<div class="actions" data-actions>
${WAITING.includes(job.state) && job.runAt.getTime() > Date.now() ? actionButton(context, { path: `/jobs/${job.id}/run-now`, label: "Run now" }) : ""}
${RETRYABLE.includes(job.state) ? actionButton(context, { path: `/jobs/${job.id}/retry`, label: "Retry now" }) : ""}
${CANCELLABLE.includes(job.state) ? actionButton(context, { path: `/jobs/${job.id}/cancel`, label: "Cancel", danger: true, confirm: job.state === "running" ? `Cancel job ${job.id}? It is running: its handler is told to stop now.` : `Cancel job ${job.id}?` }) : ""}
</div>
${fieldsTable(context, job)}
${deadLetterSection(context, job)}
${detail.lastError === null ? "" : html`<h2>Last error</h2><pre class="error" data-last-error>${detail.lastError}</pre>`}
<h2>Payload</h2>
${payloadSection(detail)}
${detail.progressText === null ? "" : html`<h2>Progress</h2><pre>${detail.progressText}</pre>`}
${detail.resultText === null ? "" : html`<h2>Result</h2><pre data-result>${detail.resultText}</pre>`}
${detail.metaText === null ? "" : html`<h2>Meta</h2><pre>${detail.metaText}</pre>`}
<h2>Attempts</h2>
${detail.attempts.length === 0 ? html`<p class="empty">No attempt has ended yet.</p>` : attemptsTable(detail.attempts)}
${
  detail.logs.length === 0
    ? ""
    : html`<h2>Log</h2>
${detail.logs.map(logSection)}`
}
<p class="note muted">Updated <time datetime="${new Date().toISOString()}" data-relative>now</time>.</p>
</div>`,
  });
}

function fieldsTable(context: PageContext, job: JobRecord): Html {
  const rows: [string, Html | string][] = [
    ["Queue", job.queue],
    ...(job.workflowId === null
      ? []
      : [
          [
            "Workflow",
            html`<a href="${href(context, `/workflows/${job.workflowId}`)}" data-workflow>Workflow ${job.workflowId}</a>, step <code>${job.step ?? "–"}</code>`,
          ] as [string, Html],
        ]),
    ...(job.group === null
      ? []
      : [["Group", html`<a href="${href(context, "/jobs", { queue: job.queue, group: job.group })}" data-group>${job.group}</a>`] as [string, Html]]),
    ...(job.serialKey === null
      ? []
      : [
          ["Serial key", html`<a href="${href(context, "/jobs", { queue: job.queue, line: job.serialKey })}" data-line>${job.serialKey}</a>`] as [string, Html],
        ]),
    ["Attempts", `${job.attempts} of ${job.maxAttempts}`],
    ["Priority", String(job.priority)],
    ["Run at", timeElement(job.runAt)],
    ["Start by", job.startBy === null ? "–" : html`${timeElement(job.startBy)}${job.errorCode === ErrorCode.Expired ? " (expired)" : ""}`],
    ["Created", timeElement(job.createdAt)],
    ["Started", timeElement(job.startedAt)],
    ["Finished", timeElement(job.finishedAt)],
    ["Duration", job.durationMs === null ? "–" : formatDuration(job.durationMs)],
    ["Timeout", job.timeoutMs === null ? "–" : formatDuration(job.timeoutMs)],
    ["Locked by", job.lockedBy ?? "–"],
    ["Locked until", timeElement(job.lockedUntil)],
    ["Dedupe key", job.dedupeKey ?? "–"],
    ["Error code", job.errorCode ?? "–"],
    ["Updated", timeElement(job.updatedAt)],
  ];
  return html`<dl class="fields">${rows.map(([name, value]) => html`<dt>${name}</dt><dd>${value}</dd>`)}</dl>`;
}

/** Where a death sends the job, the copy it became, or (on a copy) the dead job it was made from, each a link. */
function deadLetterSection(context: PageContext, job: JobRecord): Html {
  const { queue, copyId, origin } = deadLetterLinks(job.meta);
  if (queue === null && copyId === null && origin === null) return html``;
  const jobLink = (id: string, marker: string) => html`<a href="${href(context, `/jobs/${id}`)}" ${marker}>Job ${id}</a>`;
  const rows: [string, Html][] = [
    ...(queue === null ? [] : [["Dead-letter queue", html`<a href="${href(context, "/jobs", { queue })}">${queue}</a>`] as [string, Html]]),
    ...(copyId === null ? [] : [["Copied to", jobLink(copyId, "data-dead-letter-copy")] as [string, Html]]),
    ...(origin === null
      ? []
      : [
          [
            "Copy of",
            html`${jobLink(origin.jobId, "data-dead-letter-of")} of ${origin.queue}, dead after ${origin.attempts} ${origin.attempts === 1 ? "attempt" : "attempts"}${
              origin.errorCode === null ? "" : html` (<code>${origin.errorCode}</code>)`
            }${origin.error === null ? "" : html`: ${origin.error}`}`,
          ] as [string, Html],
        ]),
  ];
  return html`<h2>Dead letter</h2>
<dl class="fields" data-dead-letter>${rows.map(([name, value]) => html`<dt>${name}</dt><dd>${value}</dd>`)}</dl>`;
}

function payloadSection(detail: JobDetail): Html {
  const shown = detail.payload;
  if (!shown.shown) {
    return html`<p class="notice" data-payload-hidden>${shown.reason} Start the dashboard with <code>--app</code> (or pass <code>jobKinds</code>), or show every payload with <code>--show-payloads</code>.</p>`;
  }
  const note = shown.kindKnown
    ? shown.redactedFields.length === 0
      ? html``
      : html`<p class="muted">Secret fields redacted: ${shown.redactedFields.join(", ")}.</p>`
    : html`<p class="notice">The job kind of this queue is unknown: the payload is shown unredacted.</p>`;
  return html`${note}<pre data-payload>${JSON.stringify(shown.value, null, 2)}</pre>`;
}

function attemptsTable(attempts: readonly AttemptRecord[]): Html {
  return html`<div class="table-wrap cards"><table class="attempts">
<thead><tr><th scope="col" class="num">#</th><th scope="col">Outcome</th><th scope="col">Worker</th><th scope="col">Started</th>
<th scope="col" class="num">Duration</th><th scope="col">Error</th></tr></thead>
<tbody>
${attempts.map(
  (attempt) => html`<tr>
<td class="num" data-label="#">${attempt.attempt}</td>
<td data-label="Outcome">${stateBadge(attempt.outcome)}</td>
<td data-label="Worker">${attempt.workerId ?? "–"}</td>
<td data-label="Started">${timeElement(attempt.startedAt)}</td>
<td class="num" data-label="Duration">${attempt.durationMs === null ? "–" : formatDuration(attempt.durationMs)}</td>
<td data-label="Error">${attempt.error === null ? html`<span class="muted">–</span>` : attemptError(attempt.error)}</td>
</tr>`,
)}
</tbody></table></div>`;
}

function attemptError(error: NonNullable<AttemptRecord["error"]>): Html {
  const title = error.message ?? error.code ?? "error";
  return html`${error.code === null ? "" : html`<code>${error.code}</code> `}${
    error.stack === null ? title : html`<details><summary>${title}</summary><pre class="error">${error.stack}</pre></details>`
  }`;
}

/** One attempt's `ctx.log` lines, oldest first, after a marker when it dropped older ones. */
function logSection(log: ShownJobLog): Html {
  const dropped =
    log.droppedLines === 0
      ? ""
      : html`<li class="muted" data-dropped-lines="${log.droppedLines}">… ${log.droppedLines} earlier ${log.droppedLines === 1 ? "line" : "lines"} dropped (an attempt keeps its newest ${MAX_JOB_LOG_LINES} lines, ${MAX_JOB_LOG_BYTES / 1024} KiB)</li>`;
  return html`<h3>Attempt ${log.attempt}</h3>
<ol class="job-log" data-job-log="${log.attempt}">${dropped}${log.lines.map(
    (line) =>
      html`<li>${timeElement(line.at)} <span data-log-message>${line.message}</span>${line.fieldsText === null ? "" : html` <code>${line.fieldsText}</code>`}</li>`,
  )}</ol>`;
}
