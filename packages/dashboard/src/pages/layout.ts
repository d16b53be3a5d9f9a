import { html, type Html } from "../html/html";
import { href, type PageContext } from "./page-context";

/** What {@link layout} wraps. */
export interface PageParts {
  readonly title: string;
  readonly active?: "overview" | "jobs" | "workflows";
  readonly body: Html;
  /** A short note at the top (what an action did). */
  readonly flash?: string | undefined;
}

/**
 * The page around every view: the navigation, who is signed in, the
 * stylesheet and the one script, and a footer that names the time zone
 * times are shown in.
 */
export function layout(context: PageContext, parts: PageParts): Html {
  const nav = (name: "overview" | "jobs" | "workflows", path: string, label: string) =>
    html`<a href="${href(context, path)}"${parts.active === name ? html` aria-current="page"` : ""}>${label}</a>`;
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>${parts.title} · stint</title>
<link rel="stylesheet" href="${href(context, "/assets/dashboard.css", { v: context.assetsVersion })}">
<link rel="icon" type="image/svg+xml" href="${href(context, "/assets/favicon.svg", { v: context.assetsVersion })}">
<script src="${href(context, "/assets/dashboard.js", { v: context.assetsVersion })}" defer></script>
</head>
<body>
<header class="top">
  <span class="brand">stint</span>
  <nav>${nav("overview", "/", "Overview")}${nav("jobs", "/jobs", "Jobs")}${nav("workflows", "/workflows", "Workflows")}</nav>
  <span class="viewer">
    ${context.readOnly ? html`<span class="badge">read-only</span>` : ""}
    <span class="muted">${context.who}</span>
    ${
      context.authKind === "token"
        ? html`<form method="post" action="${href(context, "/logout")}" class="inline"><input type="hidden" name="_csrf" value="${context.csrfToken}"><button class="link">Sign out</button></form>`
        : ""
    }
  </span>
</header>
<main>
${parts.flash === undefined ? "" : html`<p class="flash" role="status">${parts.flash}</p>`}
<p class="stale" data-stale role="alert" hidden></p>
${parts.body}
</main>
<footer class="muted">Times are shown in <span data-zone>UTC</span>.</footer>
</body>
</html>`;
}

/**
 * A form that POSTs one action with the CSRF token; `confirm` makes the
 * script ask first. Nothing at all in read-only mode.
 */
export function actionButton(
  context: PageContext,
  action: {
    readonly path: string;
    readonly label: string;
    readonly confirm?: string;
    readonly danger?: boolean;
    readonly fields?: Readonly<Record<string, string>>;
  },
): Html {
  if (context.readOnly) return html``;
  return html`<form method="post" action="${href(context, action.path)}" class="inline"${action.confirm === undefined ? "" : html` data-confirm="${action.confirm}"`}>
<input type="hidden" name="_csrf" value="${context.csrfToken}">${Object.entries(action.fields ?? {}).map(([name, value]) => html`<input type="hidden" name="${name}" value="${value}">`)}
<button class="${action.danger === true ? "button danger" : "button"}">${action.label}</button></form>`;
}

/** A job state as a coloured label. */
export function stateBadge(state: string): Html {
  return html`<span class="state state-${state}">${state}</span>`;
}
