import type { JobEventSource, JobStore, QueueAdmin } from "@stint/core";
import type { PostgresJobBrowser } from "@stint/postgres-driver";

/** The bounded reads of a large jobs table (implemented by `PostgresJobBrowser`). */
export type JobBrowser = Pick<PostgresJobBrowser, "browseJobs" | "countJobsUpTo" | "estimateJobs" | "readRecentThroughput" | "readQueueGauges">;

/** Where the dashboard's figures come from and where its actions go. */
export interface DashboardSources {
  /** Jobs, attempts, controls, retry and cancel: the store the CLI uses. */
  readonly store: JobStore;
  readonly browser: JobBrowser;
  /** Pause and resume. */
  readonly admin: QueueAdmin;
  /** Job events from every process, for the live pages; without it they poll. */
  readonly events?: JobEventSource;
}
