import type { EnqueueOptions } from "../job/enqueue-options";
import type { JobDefinition } from "../job/job-definition";
import type { ClaimedJob } from "../job/job-record";
import type { JsonObject, JsonValue } from "../job/json-types";
import type { Logger } from "../logging/logger";
import type { EnqueueResult, StoreTransaction } from "../store/job-store";

/**
 * What a handler gets besides its parsed item.
 *
 * @example
 * ```ts
 * protected async processItem(item: Report, ctx: JobContext) {
 *   const rows = await fetchRows(item, { signal: ctx.signal });
 *   ctx.log.info(`Fetched ${rows.length} rows`);
 *   await ctx.enqueue(EmailReport, { reportId: item.id }); // chain the next job
 * }
 * ```
 */
export interface JobContext {
  /** The claimed job: id, queue, attempt, maxAttempts, raw payload, … */
  readonly job: ClaimedJob;
  /** The worker incarnation that owns this attempt. */
  readonly workerId: string;
  /**
   * Fires when the attempt must stop: its timeout passed, its lease was
   * lost, an operator cancelled the job, or the worker is shutting down.
   * `signal.reason` says which (`STINT_TIMEOUT`, `STINT_LEASE_LOST`,
   * `STINT_CANCELLED`, `STINT_SHUTDOWN`).
   * Pass it to fetch, database drivers and timers.
   */
  readonly signal: AbortSignal;
  /** A logger whose lines carry jobId, queue, attempt and workerId. */
  readonly log: Logger;
  /**
   * The `meta` object given at enqueue (`{}` when none), frozen. Keys
   * starting with `stint.` and `traceparent`/`tracestate` belong to stint.
   *
   * @example
   * ```ts
   * ctx.log.info(`Running for tenant ${String(ctx.meta.tenant)}`);
   * ```
   */
  readonly meta: JsonObject;

  /**
   * Reports how far the attempt got: a number or a small JSON value (at
   * most `MAX_PROGRESS_BYTES`), stored on the job for `stint jobs show`.
   * Returns at once and never fails the handler over a write: the latest
   * value wins, at most one write per job is in flight, and the last value
   * is stored before the attempt's outcome. A value that is not JSON
   * throws `PayloadError` right away.
   *
   * @example
   * ```ts
   * for (const [index, row] of rows.entries()) {
   *   await importRow(row);
   *   ctx.progress({ done: index + 1, of: rows.length });
   * }
   * ```
   */
  progress(value: JsonValue): void;
  /** Enqueues another job (chaining). */
  enqueue<U>(definition: JobDefinition<U, unknown, any>, payload: U, options?: EnqueueOptions): Promise<EnqueueResult>;

  /**
   * Runs a side effect at most once per `key`, across attempts, workers and
   * jobs, recorded in the effects ledger. The second call with a key returns
   * the first call's (JSON) result without running `effect`. Writes made
   * through the transaction `effect` receives happen exactly once; an
   * external effect (an e-mail, an API call) runs again only if the process
   * dies after doing it and before the ledger commits — pass `key` to the
   * provider as its idempotency key to close that gap.
   *
   * @example
   * ```ts
   * await ctx.once(`invoice:${id}:email`, async (trx: Transaction<DB>) => {
   *   await trx.insertInto("invoice_emails").values({ invoice_id: id }).execute();
   *   return mailer.send(mail, { idempotencyKey: `invoice:${id}:email` });
   * });
   * ```
   */
  once<R>(key: string, effect: (transaction: StoreTransaction) => Promise<R>): Promise<R>;

  /**
   * Runs `work` in a transaction that also marks this job succeeded, with
   * `work`'s result: the job's writes and its completion commit together or
   * not at all. If the worker lost the job meanwhile, the writes are rolled
   * back and the attempt counts as lease lost. Call it last: once it
   * resolves the job is done, and a later throw cannot fail it.
   *
   * @example
   * ```ts
   * return ctx.transaction(async (trx: Transaction<DB>) => {
   *   await trx.insertInto("ledger").values(entry).execute();
   *   return { entryId: entry.id };
   * });
   * ```
   */
  transaction<R>(work: (transaction: StoreTransaction) => Promise<R>): Promise<R>;
}

/**
 * What `handleFailure` decides: another attempt after `delayMs`, or give up.
 *
 * @example
 * ```ts
 * return { action: "retry", delayMs: 5_000 };
 * ```
 */
export type FailureDecision = { readonly action: "retry"; readonly delayMs: number } | { readonly action: "dead" };
