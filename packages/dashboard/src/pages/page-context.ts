/** What every page needs to know about the request it answers. */
export interface PageContext {
  /** Where the dashboard is mounted: `""` at the root, else `/admin/jobs` (no trailing slash). */
  readonly prefix: string;
  /** Changes with the static files' content (cache busting). */
  readonly assetsVersion: string;
  /** The viewer: `token:1a2b3c4d`, `user:alice` or `anonymous`. */
  readonly who: string;
  readonly authKind: "token" | "basic" | "none";
  /** Actions are hidden and refused. */
  readonly readOnly: boolean;
  /** The CSRF token the page's forms carry. */
  readonly csrfToken: string;
  /** Milliseconds between refreshes of live parts of a page when no event stream serves them. */
  readonly refreshMs: number;
  /** `GET <base>/events` streams job events: live parts follow them and poll only when the stream fails. */
  readonly liveEvents: boolean;
}

/**
 * A URL inside the dashboard: `path` under the mount point, with the query
 * fields that are not empty.
 *
 * @example
 * ```ts
 * href(context, "/jobs", { queue: "send invoice", state: "dead" }); // "/admin/jobs?queue=send+invoice&state=dead"
 * ```
 */
export function href(context: Pick<PageContext, "prefix">, path: string, query: Readonly<Record<string, string | undefined>> = {}): string {
  const fields = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) if (value !== undefined && value !== "") fields.set(name, value);
  const search = fields.toString();
  return `${context.prefix}${path}${search === "" ? "" : `?${search}`}`;
}

/** A queue name as one path segment. */
export function queuePath(queue: string): string {
  return `/queues/${encodeURIComponent(queue)}`;
}
