import type { JobPage } from "@stint/postgres-driver";
import type { DashboardSources } from "./dashboard-sources";
import type { JobsFilter } from "./jobs-filter";

/** Jobs per page. */
export const PAGE_SIZE = 50;
/** Jobs a searched filter looks at per page. */
export const SEARCH_WINDOW = 5_000;
/** Where the count of an unsearched list stops ("10,000+"). */
export const COUNT_CAP = 10_000;

/** What the jobs page shows. */
export interface JobsList {
  readonly filter: JobsFilter;
  readonly page: JobPage;
  /** Jobs matching the indexed filters, counted up to {@link COUNT_CAP} + 1; `null` for a searched page (which says what it searched). */
  readonly total: number | null;
}

/**
 * Reads one page of the jobs list and, unless the page was searched
 * within a window, the capped count of all matching jobs.
 */
export async function readJobsList(sources: DashboardSources, filter: JobsFilter): Promise<JobsList> {
  const states = filter.state === undefined ? undefined : [filter.state];
  const page = await sources.browser.browseJobs({
    ...(filter.queue === undefined ? {} : { queue: filter.queue }),
    ...(states === undefined ? {} : { states }),
    ...(filter.errorText === undefined ? {} : { errorText: filter.errorText }),
    ...(filter.createdFrom === undefined ? {} : { createdFrom: filter.createdFrom }),
    ...(filter.createdTo === undefined ? {} : { createdTo: filter.createdTo }),
    ...(filter.beforeId === undefined ? {} : { beforeId: filter.beforeId }),
    limit: PAGE_SIZE,
    scanLimit: SEARCH_WINDOW,
  });
  const total =
    page.searched !== null
      ? null
      : await sources.browser.countJobsUpTo({
          ...(filter.queue === undefined ? {} : { queue: filter.queue }),
          ...(states === undefined ? {} : { states }),
          cap: COUNT_CAP,
        });
  return Object.freeze({ filter, page, total });
}
