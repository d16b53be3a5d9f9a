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
  return layout(context, {
    title: `Retry dead jobs of ${queue}`,
    active: "overview",
    body: html`<h1>Retry dead jobs of ${queue}</h1>
${
  dead === 0
    ? html`<p class="empty">Queue ${queue} has no dead jobs.</p>`
    : html`<p data-confirm-count="${count}">Run <strong>${formatCapped(dead, cap)}</strong> dead ${dead === 1 ? "job" : "jobs"} of queue <strong>${queue}</strong> again now, each with a fresh attempt budget?${
        dead > cap ? ` At most ${formatCapped(cap, cap)} are retried now; retry again for the rest.` : ""
      }</p>
<form method="post" action="${href(context, `${queuePath(queue)}/retry-dead`)}" class="inline">
<input type="hidden" name="_csrf" value="${context.csrfToken}"><input type="hidden" name="expected" value="${count}">
<button class="button danger">Retry ${formatCapped(count, cap)} ${count === 1 ? "job" : "jobs"}</button>
</form> <a href="${href(context, "/")}">Cancel</a>`
}`,
  });
}

function barePage(title: string, body: Html, stylesheet: string): Html {
  return html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><meta name="color-scheme" content="light dark">
<title>${title} · stint</title>${stylesheet === "" ? "" : html`<link rel="stylesheet" href="${stylesheet}">`}</head>
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
