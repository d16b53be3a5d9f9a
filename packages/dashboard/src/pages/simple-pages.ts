import { formatCapped } from "../html/format";
import { html, type Html } from "../html/html";
import { layout } from "./layout";
import { href, queuePath, type PageContext } from "./page-context";

/** A refused request or a failure, as a page: a status and a sentence, never a stack. */
export function errorPage(context: PageContext | undefined, status: number, message: string, stylesheet = ""): Html {
  const body = html`<h1>${statusTitle(status)}</h1><p class="error-message" data-status="${status}">${message}</p>`;
  if (context !== undefined) return layout(context, { title: statusTitle(status), body });
  return barePage(statusTitle(status), body, stylesheet);
}

/** The sign-in page of token auth: one field; the token is sent in a POST, never in a URL. */
export function signInPage(prefix: string, assetsVersion: string, next: string, failed: boolean): Html {
  return barePage(
    "Sign in",
    html`<h1>Sign in</h1>
<form method="post" action="${prefix}/login" class="signin">
<input type="hidden" name="next" value="${next}">
<label>Dashboard token <input type="password" name="token" autocomplete="current-password" required autofocus></label>
${failed ? html`<p class="error-message">That token is not the dashboard's.</p>` : ""}
<button class="button">Sign in</button>
</form>`,
    `${prefix}/assets/dashboard.css?v=${assetsVersion}`,
  );
}

/** Asks before retrying every dead job of a queue, stating how many. */
export function confirmRetryDeadPage(context: PageContext, queue: string, dead: number, cap: number): Html {
  const count = Math.min(dead, cap);
  return confirmBulkPage(context, {
    title: `Retry dead jobs of ${queue}`,
    jobs: dead,
    cap,
    none: html`Queue ${queue} has no dead jobs.`,
    question: html`Run <strong>${formatCapped(dead, cap)}</strong> dead ${dead === 1 ? "job" : "jobs"} of queue <strong>${queue}</strong> again now, each with a fresh attempt budget?${
      dead > cap ? ` At most ${formatCapped(cap, cap)} are retried now; retry again for the rest.` : ""
    }`,
    action: `${queuePath(queue)}/retry-dead`,
    fields: {},
    button: `Retry ${formatCapped(count, cap)} ${count === 1 ? "job" : "jobs"}`,
    back: "Cancel",
  });
}

/** The words for each choice of states on the "cancel waiting" page. */
const WAITING_LABELS: Readonly<Record<string, string>> = { "queued,failed": "waiting", queued: "queued", failed: "retrying" };

/**
 * Asks before cancelling the waiting jobs of a queue in `states` (queued,
 * retrying or both), stating how many, with links to choose the others.
 */
export function confirmCancelWaitingPage(context: PageContext, queue: string, states: readonly string[], waiting: number, cap: number): Html {
  const count = Math.min(waiting, cap);
  const chosen = states.join(",");
  const label = WAITING_LABELS[chosen] ?? chosen;
  const choices = Object.entries(WAITING_LABELS).map(([value, words]) =>
    value === chosen ? html`<strong>${words}</strong>` : html`<a href="${href(context, `${queuePath(queue)}/cancel-waiting`, { states: value })}">${words}</a>`,
  );
  return confirmBulkPage(context, {
    title: `Cancel ${label} jobs of ${queue}`,
    jobs: waiting,
    cap,
    choices: html`<p class="muted">Jobs: ${choices.map((choice, index) => html`${index === 0 ? "" : " · "}${choice}`)}</p>`,
    none: html`Queue ${queue} has no ${label} jobs.`,
    question: html`Cancel <strong>${formatCapped(waiting, cap)}</strong> ${label} ${waiting === 1 ? "job" : "jobs"} of queue <strong>${queue}</strong>? They will not run; running jobs are not touched.${
      waiting > cap ? ` At most ${formatCapped(cap, cap)} are cancelled now; cancel again for the rest.` : ""
    }`,
    action: `${queuePath(queue)}/cancel-waiting`,
    fields: { states: chosen },
    button: `Cancel ${formatCapped(count, cap)} ${count === 1 ? "job" : "jobs"}`,
    back: "Back",
  });
}

/** A page that asks before an action on many jobs: how many, a form that sends that count back, and a way back. */
function confirmBulkPage(
  context: PageContext,
  page: {
    readonly title: string;
    readonly jobs: number;
    readonly cap: number;
    readonly choices?: Html;
    readonly none: Html;
    readonly question: Html;
    readonly action: string;
    readonly fields: Readonly<Record<string, string>>;
    readonly button: string;
    readonly back: string;
  },
): Html {
  const count = Math.min(page.jobs, page.cap);
  const fields = Object.entries(page.fields).map(([name, value]) => html`<input type="hidden" name="${name}" value="${value}">`);
  return layout(context, {
    title: page.title,
    active: "overview",
    body: html`<h1>${page.title}</h1>${page.choices ?? ""}
${
  page.jobs === 0
    ? html`<p class="empty">${page.none}</p>`
    : html`<p data-confirm-count="${count}">${page.question}</p>
<form method="post" action="${href(context, page.action)}" class="inline">
<input type="hidden" name="_csrf" value="${context.csrfToken}"><input type="hidden" name="expected" value="${count}">${fields}
<button class="button danger">${page.button}</button>
</form> <a href="${href(context, "/")}">${page.back}</a>`
}`,
  });
}

function barePage(title: string, body: Html, stylesheet: string): Html {
  return html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><meta name="color-scheme" content="light dark">
<title>${title} · stint</title>${
    stylesheet === ""
      ? ""
      : html`<link rel="stylesheet" href="${stylesheet}"><link rel="icon" type="image/svg+xml" href="${stylesheet.replace("dashboard.css", "favicon.svg")}">`
  }</head>
<body><main class="narrow">${body}</main></body></html>`;
}

function statusTitle(status: number): string {
  const titles: Record<number, string> = {
    400: "Bad request",
    401: "Sign in required",
    403: "Not allowed",
    404: "Not found",
    405: "Method not allowed",
    409: "Not possible now",
    413: "Too large",
    414: "Address too long",
    500: "Something went wrong",
    503: "Database unavailable",
  };
  return titles[status] ?? `Error ${status}`;
}
