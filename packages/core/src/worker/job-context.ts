import type { EnqueueOptions } from "../job/enqueue-options";
import type { JobDefinition } from "../job/job-definition";
import type { ClaimedJob } from "../job/job-record";
import type { JsonObject, JsonValue } from "../job/json-types";
import type { Logger } from "../logging/logger";
import type { EnqueueResult, StoreTransaction } from "../store/job-store";
import type { StepDependencies } from "../workflow/step-dependencies";
import type { WorkflowSteps } from "../workflow/workflow-step";

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
  /**
   * The job's own log, and the process's logger. `ctx.log(message, fields?)`
   * appends a line (the time, the text and an optional small JSON object)
   * to this attempt's log, kept with the job and shown by `stint jobs show`
   * and the dashboard: an attempt keeps its newest `MAX_JOB_LOG_LINES`
   * (100) lines within `MAX_JOB_LOG_BYTES` (32 KiB), with a count of the
   * ones dropped. Lines are written in batches (about one statement a
   * second while the handler logs, and once before the outcome); the call
   * returns at once. `ctx.log.info(…)` and the other levels go to the
   * process's logger only, with jobId, queue, attempt and workerId.
   *
   * @example
   * ```ts
   * ctx.log("Uploaded the invoice", { bytes: pdf.length }); // kept with the job
   * ctx.log.debug("Retrying the upload");                    // the process's log only
   * ```
   */
  readonly log: JobLog;
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

  /**
   * Merges `patch` into the job's `meta` (top-level keys replace; the
   * result at most `MAX_META_BYTES` of JSON, or a `PayloadError` naming
   * its size), stored at once and fenced like an outcome: a worker that
   * lost the job gets a `LeaseLostError` and nothing changes. `ctx.meta`
   * shows the merged object from then on, and later attempts start with
   * it. Keys of stint's own (`stint.*`, `traceparent`, `tracestate`) are
   * refused.
   *
   * @example
   * ```ts
   * await upload(file);
   * await ctx.updateMeta({ step: "uploaded", uploadId: file.id });
   * if (ctx.meta.step === "uploaded") return; // on a later attempt: skip the upload
   * ```
   */
  updateMeta(patch: JsonObject): Promise<void>;
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

  /**
   * For a workflow step: the steps it waits for, with their results typed
   * by their kinds, read in one query (and kept for the attempt). A step
   * that runs with `ignoreFailedDependencies` finds the ones that failed
   * in `failed`. Throws a `ConfigError` for a job that is not a step.
   *
   * @example
   * ```ts
   * const deps = await ctx.dependencies();
   * const summaries = deps.results(SummariseDocument); // SummariseDocument's result type, one per step
   * ```
   */
  dependencies(): Promise<StepDependencies>;

  /**
   * For a workflow step: adds steps to its workflow (a fan-out found at
   * run time, such as one step per document), written with this step's
   * success, in the same transaction, and never if it does not succeed.
   * Every step waiting for this one waits for the added steps too. An
   * added step's `after` names only other steps added by the same call.
   * Checked at once: a `WorkflowDefinitionError` names a step at fault.
   *
   * @example
   * ```ts
   * const documents = await listDocuments(item.folder);
   * ctx.addSteps({ summarise: documents.map((id) => step(SummariseDocument, { id })) });
   * ```
   */
  addSteps(steps: WorkflowSteps): void;
}

/**
 * `ctx.log`: called, it appends a line to the job's own log; its methods
 * are the process's logger, with the job's fields.
 *
 * @example
 * ```ts
 * ctx.log("Fetched 120 rows", { rows: 120 });
 * ctx.log.warn("The API answered slowly");
 * ```
 */
export interface JobLog extends Logger {
  (message: string, fields?: JsonObject): void;
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
