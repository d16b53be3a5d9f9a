import { assertQueueName, assertSqlIdentifier, ConfigError, integerOption, JOB_STATES, rejectUnknownOptions, type JobState } from "@stint/core";
import type { Kysely } from "kysely";
import { interpretError } from "./interpret-error";
import { assertKysely } from "./is-kysely";
import { browseJobs, type BrowseJobsParams, type JobPage } from "./queries/browse-jobs";
import { countJobsUpTo } from "./queries/count-jobs-up-to";
import { isJobId } from "./queries/job-row";
import { readRecentThroughput, type RecentThroughput, type RecentThroughputParams } from "./queries/read-recent-throughput";
import { DEFAULT_SCHEMA } from "./schema/default-schema";

/** Options of {@link PostgresJobBrowser}. */
export interface PostgresJobBrowserOptions {
  readonly db: Kysely<any>;
  /** Default `"stint"`. */
  readonly schema?: string;
}

/** Longest error text {@link PostgresJobBrowser.browseJobs} searches for. */
export const MAX_ERROR_SEARCH_LENGTH = 200;

/**
 * The reads a dashboard makes of a large jobs table, each bounded however
 * many rows the table holds: pages of job summaries with keyset pagination
 * and searched filters, capped counts, and an estimate of recent
 * throughput. Read-only; every parameter is checked before any SQL runs
 * (`ConfigError` naming it), and database errors are interpreted as the
 * store's are.
 *
 * @example
 * ```ts
 * const browser = new PostgresJobBrowser({ db, schema: "stint" });
 * const page = await browser.browseJobs({ states: ["dead"], queue: "send-invoice", limit: 50, scanLimit: 10_000 });
 * const dead = await browser.countJobsUpTo({ states: ["dead"], cap: 10_000 });
 * ```
 */
export class PostgresJobBrowser {
  readonly #db: Kysely<any>;
  readonly #schema: string;

  constructor(options: PostgresJobBrowserOptions) {
    if (typeof options !== "object" || options === null) throw new ConfigError("browser", "options must be an object");
    rejectUnknownOptions("browser", options, ["db", "schema"]);
    this.#db = assertKysely(options.db, "db");
    this.#schema = assertSqlIdentifier(options.schema ?? DEFAULT_SCHEMA, "schema");
  }

  /** See `browseJobs` in `queries/browse-jobs.ts`. */
  browseJobs(params: BrowseJobsParams): Promise<JobPage> {
    return this.#run("browseJobs", () => {
      integerOption("limit", params.limit, 1, 1_000);
      integerOption("scanLimit", params.scanLimit, 1, 1_000_000);
      checkFilters(params);
      if (params.errorText !== undefined && (typeof params.errorText !== "string" || params.errorText.length > MAX_ERROR_SEARCH_LENGTH)) {
        throw new ConfigError("errorText", `must be a text of at most ${MAX_ERROR_SEARCH_LENGTH} characters`);
      }
      for (const name of ["createdFrom", "createdTo"] as const) {
        const value = params[name];
        if (value !== undefined && !(value instanceof Date && Number.isFinite(value.getTime()))) throw new ConfigError(name, "must be a valid Date");
      }
      if (params.beforeId !== undefined && !isJobId(params.beforeId)) {
        throw new ConfigError("beforeId", `must be a job id (a positive integer as a string), got ${JSON.stringify(params.beforeId)}`);
      }
      return browseJobs(this.#db, this.#schema, params);
    });
  }

  /** See `countJobsUpTo` in `queries/count-jobs-up-to.ts`. */
  countJobsUpTo(params: { readonly queue?: string; readonly states?: readonly JobState[]; readonly cap: number }): Promise<number> {
    return this.#run("countJobsUpTo", () => {
      integerOption("cap", params.cap, 1, 1_000_000);
      checkFilters(params);
      return countJobsUpTo(this.#db, this.#schema, params);
    });
  }

  /** See `readRecentThroughput` in `queries/read-recent-throughput.ts`. */
  readRecentThroughput(params: RecentThroughputParams): Promise<RecentThroughput> {
    return this.#run("readRecentThroughput", () => {
      integerOption("windowMs", params.windowMs, 1_000, 7 * 86_400_000);
      integerOption("buckets", params.buckets, 1, 1_000);
      integerOption("scanLimit", params.scanLimit, 1, 10_000_000);
      return readRecentThroughput(this.#db, this.#schema, params);
    });
  }

  async #run<T>(operation: string, query: () => Promise<T>): Promise<T> {
    try {
      return await query();
    } catch (thrown) {
      throw interpretError(thrown, operation);
    }
  }
}

function checkFilters(params: { readonly queue?: string; readonly states?: readonly JobState[] }): void {
  if (params.queue !== undefined) assertQueueName(params.queue);
  const { states } = params;
  if (states !== undefined && (!Array.isArray(states) || states.length === 0 || !states.every((state) => JOB_STATES.includes(state)))) {
    throw new ConfigError("states", `must be a non-empty list of ${JOB_STATES.join(", ")}, got ${JSON.stringify(states)}`);
  }
}
