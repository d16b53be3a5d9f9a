import { ConfigError, JOB_STATES, type JobState, type QueueGauges } from "@stint/core";
import { assertSqlIdentifier, integerOption, MAX_GROUP_KEY_LENGTH, rejectUnknownOptions } from "@stint/core/driver";
import { sql, type Kysely } from "kysely";
import { interpretError } from "./interpret-error";
import { assertKysely } from "./is-kysely";
import { browseJobs, type BrowseIndexes, type BrowseJobsParams, type JobPage } from "./queries/browse-jobs";
import { estimateJobs, type JobsEstimate } from "./queries/estimate-jobs";
import { countJobsUpTo } from "./queries/count-jobs-up-to";
import { isJobId } from "./queries/job-row";
import { readQueueGauges } from "./queries/read-queue-gauges";
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
 * Longest queue name the browser reads. Longer than the naming rule's 128:
 * a queue written by SQL may break the rule and must still be listable; the
 * filter is a bound parameter, so any text is safe to read with.
 */
export const MAX_BROWSED_QUEUE_LENGTH = 1_000;

/** How long the browser trusts what it found out about the trigram indexes (they can be created by hand later). */
const INDEX_CHECK_TTL_MS = 60_000;

/**
 * The reads a dashboard makes of the jobs, active ones in `jobs` and
 * finished ones in `finished_jobs` alike, each bounded however many rows
 * the tables hold: pages of job summaries with keyset pagination and
 * searched filters, capped counts, and the recent throughput. Read-only;
 * every parameter is checked before any SQL runs (`ConfigError` naming
 * it), and database errors are interpreted as the store's are.
 *
 * Each statement runs in a transaction of its own with `enable_seqscan`
 * off: each is built to read an index range, and the planner's cost model
 * misjudges these tables. It assumes the waiting jobs are scattered over
 * the heap, while they are its newest rows, clustered at the end, so on a
 * large table it prefers a scan of the whole table to the partial index
 * `jobs_claim_idx`, which is far faster.
 * JIT compilation is off too: a read that has no index to use (the
 * finished rows an upgrade has not moved out of `jobs` yet) keeps its
 * sequential scan, whose cost `enable_seqscan = off` inflates past every
 * JIT threshold, and the read then spends far longer compiling than
 * working (see docs/benchmarks.md, Figures behind the code).
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
  #indexes: { readonly found: Promise<BrowseIndexes>; readonly at: number } | undefined;

  constructor(options: PostgresJobBrowserOptions) {
    if (typeof options !== "object" || options === null) throw new ConfigError("browser", "options must be an object");
    rejectUnknownOptions("browser", options, ["db", "schema"]);
    this.#db = assertKysely(options.db, "db");
    this.#schema = assertSqlIdentifier(options.schema ?? DEFAULT_SCHEMA, "schema");
  }

  /**
   * The gauges of every queue with waiting, running or dead jobs (see
   * `readQueueGauges` in `queries/read-queue-gauges.ts`), planned as the
   * browser's other reads are.
   */
  readQueueGauges(): Promise<readonly QueueGauges[]> {
    return this.#read("readQueueGauges", (executor) => readQueueGauges(executor, this.#schema, {}));
  }

  /** See `browseJobs` in `queries/browse-jobs.ts`. */
  async browseJobs(params: BrowseJobsParams): Promise<JobPage> {
    integerOption("limit", params.limit, 1, 1_000);
    integerOption("scanLimit", params.scanLimit, 1, 1_000_000);
    checkFilters(params);
    const { errorText } = params;
    if (errorText !== undefined && (typeof errorText !== "string" || errorText.length > MAX_ERROR_SEARCH_LENGTH || errorText.includes("\u0000"))) {
      throw new ConfigError("errorText", `must be a text of at most ${MAX_ERROR_SEARCH_LENGTH} characters without NUL`);
    }
    for (const name of ["createdFrom", "createdTo"] as const) {
      const value = params[name];
      if (value !== undefined && !(value instanceof Date && Number.isFinite(value.getTime()))) throw new ConfigError(name, "must be a valid Date");
    }
    for (const name of ["beforeId", "afterId"] as const) {
      const value = params[name];
      if (value !== undefined && !isJobId(value))
        throw new ConfigError(name, `must be a job id (a positive integer as a string), got ${JSON.stringify(value)}`);
    }
    if (params.beforeId !== undefined && params.afterId !== undefined)
      throw new ConfigError("afterId", "cannot be given with beforeId: a page is read one way");
    if (params.scheduled !== undefined && typeof params.scheduled !== "boolean") throw new ConfigError("scheduled", "must be true or false");
    const indexes = await this.#browseIndexes();
    return this.#read("browseJobs", (executor) => browseJobs(executor, this.#schema, params, indexes));
  }

  /**
   * Which optional indexes of migration 19 the schema has: the trigram
   * indexes on `last_error` exist only where `pg_trgm` could be installed.
   * Checked at most once a minute.
   *
   * @example
   * ```ts
   * const { errorText } = await browser.browseIndexes(); // false: the error text is searched within a window
   * ```
   */
  browseIndexes(): Promise<BrowseIndexes> {
    return this.#browseIndexes();
  }

  /** See `estimateJobs` in `queries/estimate-jobs.ts`. */
  estimateJobs(): Promise<JobsEstimate> {
    return this.#read("estimateJobs", (executor) => estimateJobs(executor, this.#schema));
  }

  #browseIndexes(): Promise<BrowseIndexes> {
    const now = Date.now();
    if (this.#indexes === undefined || now - this.#indexes.at > INDEX_CHECK_TTL_MS) {
      const found = this.#read("browseIndexes", async (executor) => {
        const { rows } = await sql<{ error_text: boolean }>`SELECT
          to_regclass(${`${quoteIdentifier(this.#schema)}.jobs_last_error_trgm_idx`}) IS NOT NULL
          AND to_regclass(${`${quoteIdentifier(this.#schema)}.finished_jobs_last_error_trgm_idx`}) IS NOT NULL AS error_text`.execute(executor);
        return Object.freeze({ errorText: rows[0]?.error_text === true });
      });
      this.#indexes = { found, at: now };
      found.catch(() => {
        if (this.#indexes?.found === found) this.#indexes = undefined;
      });
    }
    return this.#indexes.found;
  }

  /** See `countJobsUpTo` in `queries/count-jobs-up-to.ts`. */
  async countJobsUpTo(params: { readonly queue?: string; readonly states?: readonly JobState[]; readonly cap: number }): Promise<number> {
    integerOption("cap", params.cap, 1, 1_000_000);
    checkFilters(params);
    return this.#read("countJobsUpTo", (executor) => countJobsUpTo(executor, this.#schema, params));
  }

  /** See `readRecentThroughput` in `queries/read-recent-throughput.ts`. */
  async readRecentThroughput(params: RecentThroughputParams): Promise<RecentThroughput> {
    integerOption("windowMs", params.windowMs, 1_000, 7 * 86_400_000);
    integerOption("buckets", params.buckets, 1, 1_000);
    integerOption("scanLimit", params.scanLimit, 1, 10_000_000);
    return this.#read("readRecentThroughput", (executor) => readRecentThroughput(executor, this.#schema, params));
  }

  /** Runs one read in a transaction of its own, with sequential scans and JIT compilation off (see the class). */
  async #read<T>(operation: string, query: (executor: Kysely<any>) => Promise<T>): Promise<T> {
    try {
      return await this.#db.transaction().execute(async (trx) => {
        await sql`SELECT set_config('enable_seqscan', 'off', true), set_config('jit', 'off', true)`.execute(trx);
        return query(trx);
      });
    } catch (thrown) {
      throw interpretError(thrown, operation, { schema: this.#schema });
    }
  }
}

function checkFilters(params: { readonly queue?: string; readonly states?: readonly JobState[]; readonly group?: string; readonly serialKey?: string }): void {
  for (const name of ["group", "serialKey"] as const) {
    const key = params[name];
    if (key !== undefined && (typeof key !== "string" || key.length === 0 || key.length > MAX_GROUP_KEY_LENGTH || key.includes("\u0000"))) {
      throw new ConfigError(name, `must be a text of 1 to ${MAX_GROUP_KEY_LENGTH} characters without NUL`);
    }
  }
  if (params.group !== undefined && params.serialKey !== undefined)
    throw new ConfigError("serialKey", "cannot be given with group: a job has one or the other");
  const { queue } = params;
  if (queue !== undefined && (typeof queue !== "string" || queue.length === 0 || queue.length > MAX_BROWSED_QUEUE_LENGTH || queue.includes("\u0000"))) {
    throw new ConfigError("queue", `must be a text of 1 to ${MAX_BROWSED_QUEUE_LENGTH} characters without NUL`);
  }
  const { states } = params;
  if (states !== undefined && (!Array.isArray(states) || states.length === 0 || !states.every((state: JobState) => JOB_STATES.includes(state)))) {
    throw new ConfigError("states", `must be a non-empty list of ${JOB_STATES.join(", ")}, got ${JSON.stringify(states)}`);
  }
}

function quoteIdentifier(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}
