import type { JobState, QueueControls } from "@stint/core";
import { assertQueueName, type GroupSummary } from "@stint/core/driver";
import type { JobPage } from "@stint/postgres-driver";
import type { DashboardSources } from "./dashboard-sources";
import type { JobsFilter } from "./jobs-filter";

/** Jobs per page. */
export const PAGE_SIZE = 50;
/** Jobs the error-text filter looks at per page when no trigram index serves it. */
export const SEARCH_WINDOW = 5_000;
/** Where the count of a list stops ("10,000+"). */
export const COUNT_CAP = 10_000;
/** The busiest groups a queue's jobs page shows. */
export const TOP_GROUPS = 10;

/** How many jobs match, as the jobs page shows it. */
export type JobsTotal =
  /** Counted exactly, up to {@link COUNT_CAP}; `atLeast` when the count stopped there. */
  | { readonly kind: "counted"; readonly jobs: number; readonly atLeast: boolean; readonly estimate?: number }
  /** Not counted (a time range or an error text): at least the jobs on this page and the pages before. */
  | { readonly kind: "unknown" };

/** What the jobs page shows. */
export interface JobsList {
  readonly filter: JobsFilter;
  readonly page: JobPage;
  /**
   * The jobs matching the filter, counted up to {@link COUNT_CAP} when the
   * filter is a queue and/or a state; past the cap, with no filter, the
   * planner's estimate of every job (label it "about"); `unknown` for a time
   * range or an error text, which are not counted.
   */
  readonly total: JobsTotal;
  /**
   * On a queue's page without a group filter: the queue's controls and its
   * busiest groups and lines ({@link TOP_GROUPS}; empty when it has none).
   */
  readonly groups?: { readonly controls: QueueControls | undefined; readonly busiest: readonly GroupSummary[] };
}

/**
 * Reads one page of the jobs list, older or newer than the cursor, with
 * every filter read from an index (see `PostgresJobBrowser.browseJobs`),
 * and the count: capped, exact below the cap, an estimate labelled as such
 * above it when nothing is filtered.
 *
 * @example
 * ```ts
 * const list = await readJobsList(sources, parseJobsFilter(new URLSearchParams("queue=send-invoice&state=dead")));
 * console.log(list.page.jobs.length, list.total);
 * ```
 */
export async function readJobsList(sources: DashboardSources, filter: JobsFilter): Promise<JobsList> {
  const states: readonly JobState[] | undefined = filter.state === undefined ? undefined : [filter.state];
  const grouped = filter.group !== undefined || filter.serialKey !== undefined;
  const counted = filter.errorText === undefined && filter.createdFrom === undefined && filter.createdTo === undefined && filter.scheduled !== true && !grouped;
  const [page, total, groups] = await Promise.all([
    sources.browser.browseJobs({
      ...(filter.queue === undefined ? {} : { queue: filter.queue }),
      ...(states === undefined ? {} : { states }),
      ...(filter.errorText === undefined ? {} : { errorText: filter.errorText }),
      ...(filter.group === undefined ? {} : { group: filter.group }),
      ...(filter.serialKey === undefined ? {} : { serialKey: filter.serialKey }),
      ...(filter.createdFrom === undefined ? {} : { createdFrom: filter.createdFrom }),
      ...(filter.createdTo === undefined ? {} : { createdTo: filter.createdTo }),
      ...(filter.scheduled === true ? { scheduled: true } : {}),
      ...(filter.beforeId === undefined ? {} : { beforeId: filter.beforeId }),
      ...(filter.afterId === undefined ? {} : { afterId: filter.afterId }),
      limit: PAGE_SIZE,
      scanLimit: SEARCH_WINDOW,
    }),
    counted ? countJobs(sources, filter.queue, states) : Promise.resolve({ kind: "unknown" } as const),
    filter.queue === undefined || grouped ? undefined : readGroups(sources, filter.queue),
  ]);
  return Object.freeze({ filter, page, total, ...(groups === undefined ? {} : { groups }) });
}

/** A queue's controls and busiest groups; none for a queue written by SQL whose name breaks the naming rule (the store refuses it). */
async function readGroups(sources: DashboardSources, queue: string): Promise<JobsList["groups"]> {
  try {
    assertQueueName(queue);
  } catch {
    return undefined;
  }
  const [busiest, controls] = await Promise.all([sources.store.listGroups({ queues: [queue], limit: TOP_GROUPS }), sources.store.listQueueControls()]);
  return Object.freeze({ controls: controls.find((entry) => entry.queue === queue), busiest });
}

async function countJobs(sources: DashboardSources, queue: string | undefined, states: readonly JobState[] | undefined): Promise<JobsTotal> {
  const jobs = await sources.browser.countJobsUpTo({
    ...(queue === undefined ? {} : { queue }),
    ...(states === undefined ? {} : { states }),
    cap: COUNT_CAP,
  });
  if (jobs <= COUNT_CAP) return Object.freeze({ kind: "counted", jobs, atLeast: false });
  if (queue !== undefined || states !== undefined) return Object.freeze({ kind: "counted", jobs: COUNT_CAP, atLeast: true });
  const { active, finished } = await sources.browser.estimateJobs();
  return Object.freeze({ kind: "counted", jobs: COUNT_CAP, atLeast: true, estimate: Math.max(active + finished, COUNT_CAP) });
}
