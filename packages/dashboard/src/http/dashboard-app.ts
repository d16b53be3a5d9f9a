import type { IncomingMessage, ServerResponse } from "node:http";
import { errorCodeOf, ErrorCode, type Logger } from "@stint/core";
import { DashboardActions } from "../data/dashboard-actions";
import type { DashboardSources } from "../data/dashboard-sources";
import { readJobDetail } from "../data/job-detail-data";
import { parseJobsFilter } from "../data/jobs-filter";
import { readJobsList } from "../data/jobs-list-data";
import { readOverview } from "../data/overview-data";
import { parseWorkflowsFilter, readWorkflow, readWorkflowsList } from "../data/workflow-data";
import { assertQueueExists, checkedQueueName } from "../data/queue-name";
import type { PayloadPolicy } from "../data/payload-policy";
import { MAX_CANCEL_WAITING, MAX_RETRY_DEAD, waitingStates } from "../data/dashboard-actions";
import { jobPage } from "../pages/job-page";
import { jobsPage } from "../pages/jobs-page";
import { workflowPage, workflowsPage } from "../pages/workflow-page";
import { overviewFragment, overviewPage } from "../pages/overview-page";
import { href, type PageContext } from "../pages/page-context";
import { confirmCancelWaitingPage, confirmRetryDeadPage, errorPage, signInPage } from "../pages/simple-pages";
import type { Authenticator } from "./auth";
import { cookieHeader, CSRF_COOKIE, parseCookies, SESSION_COOKIE } from "./cookies";
import { CSRF_FIELD, CsrfTokens } from "./csrf";
import { flashMessage } from "./flash";
import type { HostPolicy } from "./host-policy";
import { safeNext } from "./next-path";
import { readForm } from "./read-form";
import { EventStreams, parseStreamFilter } from "./event-stream";
import { DashboardErrorCode, RequestRefused } from "./request-refused";
import { isCrossSite, isSecure } from "./request-guard";
import { redirect, sendHtml } from "./respond";
import type { SignInLimiter } from "./sign-in-limiter";
import type { StaticAssets } from "./static-assets";

/** Longest request target accepted (path and query), in characters. */
export const MAX_URL_LENGTH = 2_048;

/** What {@link DashboardApp} is built from (see `createDashboard`). */
export interface DashboardAppSettings {
  readonly sources: DashboardSources;
  readonly auth: Authenticator;
  readonly policy: PayloadPolicy;
  readonly assets: StaticAssets;
  /** `""` at the root, else the base path without a trailing slash. */
  readonly prefix: string;
  readonly readOnly: boolean;
  readonly refreshMs: number;
  readonly log: Logger;
  /** Which `Host` names are answered (DNS rebinding). */
  readonly hosts: HostPolicy;
  /** Wrong credentials per address. */
  readonly signIns: SignInLimiter;
}

/** A request after the dashboard's checks: who, the CSRF token, cookies to set. */
interface Viewer {
  readonly context: PageContext;
  readonly nonce: string;
  readonly setCookies: string[];
}

/**
 * Answers the dashboard's requests: routing under the base path, static
 * files, sign-in, the credential on every page, the CSRF token, read-only
 * mode and the origin check on every POST, and error pages that never
 * show a stack. One instance per `createDashboard`.
 */
export class DashboardApp {
  readonly #settings: DashboardAppSettings;
  readonly #csrf: CsrfTokens;
  readonly #actions: DashboardActions;
  readonly #streams: EventStreams | undefined;

  constructor(settings: DashboardAppSettings) {
    this.#settings = settings;
    this.#csrf = new CsrfTokens(settings.auth.csrfKey);
    this.#actions = new DashboardActions(settings.sources, settings.log);
    this.#streams = settings.sources.events === undefined ? undefined : new EventStreams(settings.sources.events, settings.log);
  }

  /**
   * Handles one request; calls `next` (when given) for a path outside the
   * base path, else answers 404. Never rejects.
   */
  async handle(request: IncomingMessage & { originalUrl?: string }, response: ServerResponse, next?: (error?: unknown) => void): Promise<void> {
    let viewer: Viewer | undefined;
    try {
      const target = request.originalUrl ?? request.url ?? "/";
      if (target.length > MAX_URL_LENGTH)
        throw new RequestRefused(DashboardErrorCode.UriTooLong, `Addresses may be at most ${MAX_URL_LENGTH} characters long.`);
      const url = new URL(target, "http://dashboard.invalid");
      const path = this.#relativePath(url.pathname);
      if (path === undefined) {
        if (next !== undefined) return next();
        throw new RequestRefused(DashboardErrorCode.NotFound, "There is no such page.");
      }
      this.#settings.hosts.check(request);
      const method = request.method === "HEAD" ? "GET" : (request.method ?? "GET");
      if (method !== "GET" && method !== "POST") throw new RequestRefused(DashboardErrorCode.MethodNotAllowed, "Only GET and POST are answered.");
      if (path.startsWith("/assets/") && method === "GET") {
        if (this.#settings.assets.send(path.slice("/assets/".length), response, request.headers["if-none-match"])) return;
        throw new RequestRefused(DashboardErrorCode.NotFound, "There is no such file.");
      }
      const cookies = parseCookies(request.headers.cookie);
      if (path === "/login") return await this.#signIn(request, response, method, url);
      viewer = this.#viewer(request, response, cookies, method, url);
      if (viewer === undefined) return;
      if (method === "POST") return await this.#post(request, response, viewer, path);
      if (path === "/events") return await this.#stream(request, response, url.searchParams, cookies);
      return await this.#get(response, viewer, path, url.searchParams);
    } catch (thrown) {
      this.#fail(request, response, viewer, thrown);
    }
  }

  #relativePath(pathname: string): string | undefined {
    const { prefix } = this.#settings;
    if (prefix === "") return pathname;
    if (pathname === prefix) return "/";
    return pathname.startsWith(`${prefix}/`) ? pathname.slice(prefix.length) : undefined;
  }

  /** Who is asking, or `undefined` after answering a request without a valid credential. */
  #viewer(request: IncomingMessage, response: ServerResponse, cookies: ReadonlyMap<string, string>, method: string, url: URL): Viewer | undefined {
    const { auth, prefix, signIns } = this.#settings;
    const sentCredential = request.headers.authorization !== undefined;
    if (sentCredential) signIns.check(request.socket.remoteAddress);
    const who = auth.identify(request, cookies.get(SESSION_COOKIE));
    if (who === undefined) {
      if (sentCredential) signIns.fail(request.socket.remoteAddress);
      if (method === "POST") {
        this.#settings.log.warn("Dashboard: refused an action without a valid credential", { remoteAddress: request.socket.remoteAddress });
        throw new RequestRefused(DashboardErrorCode.Forbidden, "Actions need the dashboard's credential.");
      }
      if (auth.kind === "token") {
        sendHtml(response, 401, signInPage(prefix, this.#settings.assets.version, `${url.pathname}${url.search}`, false));
      } else {
        sendHtml(response, 401, errorPage(undefined, 401, "This dashboard needs a user name and password.", this.#stylesheet()), {
          "WWW-Authenticate": 'Basic realm="stint dashboard", charset="UTF-8"',
        });
      }
      return undefined;
    }
    const setCookies: string[] = [];
    let nonce = cookies.get(CSRF_COOKIE);
    if (nonce === undefined || !/^[A-Za-z0-9_-]{16,64}$/.test(nonce)) {
      nonce = this.#csrf.newNonce();
      setCookies.push(cookieHeader(CSRF_COOKIE, nonce, { path: this.#cookiePath(), secure: isSecure(request) }));
    }
    const context: PageContext = Object.freeze({
      prefix,
      assetsVersion: this.#settings.assets.version,
      who,
      authKind: auth.kind,
      readOnly: this.#settings.readOnly,
      csrfToken: this.#csrf.tokenFor(nonce, who),
      refreshMs: this.#settings.refreshMs,
      liveEvents: this.#streams !== undefined,
    });
    return { context, nonce, setCookies };
  }

  async #get(response: ServerResponse, viewer: Viewer, path: string, query: URLSearchParams): Promise<void> {
    const { sources, policy } = this.#settings;
    const { context } = viewer;
    const headers: Record<string, string[]> = viewer.setCookies.length === 0 ? {} : { "Set-Cookie": viewer.setCookies };
    const send = (body: Parameters<typeof sendHtml>[2]) => sendHtml(response, 200, body, headers);
    if (path === "/") return send(overviewPage(context, await readOverview(sources), flashMessage(query)));
    if (path === "/fragments/overview") return send(overviewFragment(context, await readOverview(sources)));
    if (path === "/jobs") return send(jobsPage(context, await readJobsList(sources, parseJobsFilter(query)), flashMessage(query)));
    const job = /^\/jobs\/([^/]+)$/.exec(path);
    if (job !== null) return send(jobPage(context, await readJobDetail(sources, policy, decodeSegment(job[1]!)), flashMessage(query)));
    if (path === "/workflows") return send(workflowsPage(context, await readWorkflowsList(sources, parseWorkflowsFilter(query)), flashMessage(query)));
    const workflow = /^\/workflows\/([^/]+)$/.exec(path);
    if (workflow !== null) return send(workflowPage(context, await readWorkflow(sources, decodeSegment(workflow[1]!)), flashMessage(query)));
    const retryDead = /^\/queues\/([^/]+)\/retry-dead$/.exec(path);
    if ((retryDead !== null || /^\/queues\/[^/]+\/cancel-waiting$/.test(path)) && context.readOnly) {
      throw new RequestRefused(DashboardErrorCode.Forbidden, "This dashboard is read-only.");
    }
    if (retryDead !== null) {
      const queue = checkedQueueName(decodeSegment(retryDead[1]!));
      await assertQueueExists(sources, queue);
      const dead = await sources.browser.countJobsUpTo({ queue, states: ["dead"], cap: MAX_RETRY_DEAD });
      return send(confirmRetryDeadPage(context, queue, dead, MAX_RETRY_DEAD));
    }
    const cancelWaiting = /^\/queues\/([^/]+)\/cancel-waiting$/.exec(path);
    if (cancelWaiting !== null) {
      const queue = checkedQueueName(decodeSegment(cancelWaiting[1]!));
      const states = waitingStates(query.get("states"));
      await assertQueueExists(sources, queue);
      const waiting = await sources.browser.countJobsUpTo({ queue, states, cap: MAX_CANCEL_WAITING });
      return send(confirmCancelWaitingPage(context, queue, states, waiting, MAX_CANCEL_WAITING));
    }
    throw new RequestRefused(DashboardErrorCode.NotFound, "There is no such page.");
  }

  /** `GET <base>/events`: job events as server-sent events, for a viewer with the credential (a 404 without an event source). */
  async #stream(request: IncomingMessage, response: ServerResponse, query: URLSearchParams, cookies: ReadonlyMap<string, string>): Promise<void> {
    if (this.#streams === undefined) throw new RequestRefused(DashboardErrorCode.NotFound, "This dashboard has no live events; its pages refresh themselves.");
    // A stream outlives the request that opened it: it ends at the first heartbeat after sign-out or expiry.
    const signedIn = (): boolean => this.#settings.auth.identify(request, cookies.get(SESSION_COOKIE)) !== undefined;
    await this.#streams.open(request, response, parseStreamFilter(query), signedIn);
  }

  async #post(request: IncomingMessage, response: ServerResponse, viewer: Viewer, path: string): Promise<void> {
    const { context } = viewer;
    if (isCrossSite(request)) throw this.#refuse(request, context.who, "a POST from another site");
    if (this.#settings.readOnly && path !== "/logout") throw this.#refuse(request, context.who, "an action in read-only mode", "This dashboard is read-only.");
    const form = await readForm(request);
    if (!this.#csrf.check(viewer.nonce, context.who, form.get(CSRF_FIELD) ?? undefined))
      throw this.#refuse(request, context.who, "a POST without a valid CSRF token");
    if (path === "/logout") {
      this.#settings.auth.signOut(parseCookies(request.headers.cookie).get(SESSION_COOKIE));
      redirect(response, `${this.#settings.prefix}/login`, {
        "Set-Cookie": cookieHeader(SESSION_COOKIE, "", { path: this.#cookiePath(), secure: isSecure(request), maxAgeSeconds: 0 }),
      });
      return;
    }
    const actor = { who: context.who, remoteAddress: request.socket.remoteAddress };
    const jobAction = /^\/jobs\/([^/]+)\/(retry|cancel|run-now)$/.exec(path);
    if (jobAction !== null) {
      const id = decodeSegment(jobAction[1]!);
      const done = JOB_ACTION_DONE[jobAction[2]!]!;
      if (jobAction[2] === "retry") await this.#actions.retryJob(id, actor);
      else if (jobAction[2] === "run-now") await this.#actions.runJobNow(id, actor);
      else await this.#actions.cancelJob(id, actor);
      return redirect(response, listReturn(form.get("back"), this.#settings.prefix, done) ?? href(context, `/jobs/${id}`, { done }));
    }
    const workflowCancel = /^\/workflows\/([^/]+)\/cancel$/.exec(path);
    if (workflowCancel !== null) {
      const id = decodeSegment(workflowCancel[1]!);
      const cancelled = await this.#actions.cancelWorkflow(id, actor);
      return redirect(response, href(context, `/workflows/${id}`, { done: "cancelled-workflow", n: String(cancelled) }));
    }
    const queueAction = /^\/queues\/([^/]+)\/(pause|resume|retry-dead|cancel-waiting)$/.exec(path);
    if (queueAction !== null) {
      const queue = decodeSegment(queueAction[1]!);
      if (queueAction[2] === "retry-dead") {
        const retried = await this.#actions.retryDeadJobs(queue, Number(form.get("expected") ?? ""), actor);
        return redirect(response, href(context, "/", { done: "retried-dead", queue, n: String(retried) }));
      }
      if (queueAction[2] === "cancel-waiting") {
        const states = waitingStates(form.get("states"));
        const cancelled = await this.#actions.cancelWaiting(queue, states, Number(form.get("expected") ?? ""), actor);
        return redirect(response, href(context, "/", { done: "cancelled-waiting", queue, n: String(cancelled) }));
      }
      await this.#actions.setPaused(queue, queueAction[2] === "pause", actor);
      return redirect(response, href(context, "/", { done: queueAction[2] === "pause" ? "paused" : "resumed", queue }));
    }
    throw new RequestRefused(DashboardErrorCode.NotFound, "There is no such action.");
  }

  async #signIn(request: IncomingMessage, response: ServerResponse, method: string, url: URL): Promise<void> {
    const { auth, prefix, assets, signIns } = this.#settings;
    if (auth.kind !== "token") return redirect(response, `${prefix}/`);
    const next = safeNext(url.searchParams.get("next") ?? "", prefix);
    if (method === "GET") return sendHtml(response, 200, signInPage(prefix, assets.version, next, false));
    if (isCrossSite(request)) throw this.#refuse(request, "anonymous", "a sign-in from another site");
    signIns.check(request.socket.remoteAddress);
    const form = await readForm(request);
    const session = auth.signIn(form.get("token") ?? "");
    if (session === undefined) {
      signIns.fail(request.socket.remoteAddress);
      this.#settings.log.warn("Dashboard: refused a sign-in with a wrong token", { remoteAddress: request.socket.remoteAddress });
      return sendHtml(response, 401, signInPage(prefix, assets.version, safeNext(form.get("next") ?? "", prefix), true));
    }
    // A new session replaces the one this browser had, if any.
    auth.signOut(parseCookies(request.headers.cookie).get(SESSION_COOKIE));
    redirect(response, safeNext(form.get("next") ?? "", prefix), {
      "Set-Cookie": cookieHeader(SESSION_COOKIE, session, { path: this.#cookiePath(), secure: isSecure(request), maxAgeSeconds: auth.sessionMaxAgeSeconds }),
    });
  }

  #refuse(request: IncomingMessage, who: string, what: string, message = "The request was refused."): RequestRefused {
    this.#settings.log.warn(`Dashboard: refused ${what}`, { who, remoteAddress: request.socket.remoteAddress });
    return new RequestRefused(DashboardErrorCode.Forbidden, message);
  }

  #fail(request: IncomingMessage, response: ServerResponse, viewer: Viewer | undefined, thrown: unknown): void {
    if (response.headersSent) {
      response.destroy();
      return;
    }
    const refused = asRefusal(thrown);
    if (refused === undefined) {
      this.#settings.log.error("Dashboard: a request failed", { method: request.method, error: thrown });
    }
    const status = refused?.status ?? 500;
    const message = refused?.message ?? "The dashboard could not answer this request; the details are in its log.";
    if (status === 503) this.#settings.log.warn("Dashboard: the database did not answer", { error: thrown });
    sendHtml(response, status, errorPage(viewer?.context, status, message, this.#stylesheet()), refused?.headers);
  }

  #stylesheet(): string {
    return `${this.#settings.prefix}/assets/dashboard.css?v=${this.#settings.assets.version}`;
  }

  #cookiePath(): string {
    return this.#settings.prefix === "" ? "/" : this.#settings.prefix;
  }
}

/** A thrown value as the refusal it stands for, or `undefined` for a failure of the dashboard itself. */
function asRefusal(thrown: unknown): RequestRefused | undefined {
  if (thrown instanceof RequestRefused) return thrown;
  const code = errorCodeOf(thrown);
  if (code === ErrorCode.Config || code === ErrorCode.InvalidName)
    return new RequestRefused(DashboardErrorCode.BadRequest, "A parameter of the request is not valid.");
  if (code === ErrorCode.Infrastructure) return new RequestRefused(DashboardErrorCode.Unavailable, "The database did not answer; try again in a moment.");
  return undefined;
}

function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw new RequestRefused(DashboardErrorCode.BadRequest, "The address is not valid.");
  }
}

/** The `done` field of the redirect after each action on one job (see `flashMessage`). */
const JOB_ACTION_DONE: Readonly<Record<string, string>> = { retry: "retried", cancel: "cancelled", "run-now": "ran-now" };

/**
 * Where a per-row action on the jobs list goes back to: the list with the
 * filters it was sent from (`back`, a path and query) and `done`, rebuilt
 * from its parts so it can only be the dashboard's jobs list; `undefined`
 * when `back` is missing or anything else.
 */
function listReturn(back: string | null, prefix: string, done: string): string | undefined {
  // eslint-disable-next-line no-control-regex
  if (back === null || !back.startsWith(`${prefix}/jobs`) || /[\u0000-\u001f\\]/.test(back)) return undefined;
  const url = new URL(back, "http://dashboard.invalid");
  if (url.origin !== "http://dashboard.invalid" || url.pathname !== `${prefix}/jobs`) return undefined;
  url.searchParams.delete("done");
  url.searchParams.set("done", done);
  return `${url.pathname}?${url.searchParams.toString()}`;
}
