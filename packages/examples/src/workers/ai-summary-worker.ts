import { JOB_STORE, LOGGER, permanent, retryAfter, SchemaQueueWorker, type BackoffOptions, type JobContext, type JobStore, type Logger } from "@stint/core";
import { sql } from "kysely";
import { inject, injectable } from "tsyringe";
import { APP_DB, LLM_CLIENT, RETRY_BACKOFF } from "../app-tokens";
import type { AppDb } from "../app/app-tables";
import { AiSummary } from "../jobs/ai-summary";
import { isRateLimited, type LlmClient } from "../services/llm-client";

/**
 * Longest document the model accepts, in characters; longer ones can never succeed.
 *
 * @example
 * ```ts
 * if (document.body.length > MAX_DOCUMENT_CHARS) throw permanent(new Error("too long"));
 * ```
 */
export const MAX_DOCUMENT_CHARS = 20_000;

/** What an `ai-summary` job stores as its result. */
export interface AiSummaryResult {
  readonly documentId: number;
  readonly words: number;
  readonly model: string;
}

/**
 * Summarises documents with a language model, eight at a time: the worker
 * claims up to eight jobs in one statement and runs them in parallel, since
 * each spends its time waiting on the model API.
 *
 * - A 429 from the API becomes `retryAfter(retryAfterMs)`: the next attempt
 *   waits as long as the API asked, not the backoff policy's delay.
 * - A document over {@link MAX_DOCUMENT_CHARS} can never be summarised:
 *   `permanent(…)` sends the job to `dead` at once, without retries.
 * - `ctx.signal` goes to the API call, so a timeout or shutdown stops the
 *   request instead of leaving it running.
 *
 * @example
 * ```ts
 * await client.enqueueMany(AiSummary, [{ payload: { documentId: 1 } }, { payload: { documentId: 2, maxWords: 30 } }]);
 * ```
 */
@injectable()
export class AiSummaryWorker extends SchemaQueueWorker<AiSummary> {
  readonly job = AiSummary;
  readonly #db: AppDb;
  readonly #llm: LlmClient;

  constructor(
    @inject(JOB_STORE) store: JobStore,
    @inject(LOGGER) log: Logger,
    @inject(APP_DB) db: AppDb,
    @inject(LLM_CLIENT) llm: LlmClient,
    @inject(RETRY_BACKOFF) backoff: Partial<BackoffOptions>,
  ) {
    super(store, log, { concurrency: 8, leaseMs: 60_000, backoff });
    this.#db = db;
    this.#llm = llm;
  }

  protected override async processItem(item: AiSummary, ctx: JobContext): Promise<AiSummaryResult> {
    const document = await this.#db.selectFrom("documents").select(["id", "title", "body"]).where("id", "=", item.documentId).executeTakeFirst();
    if (document === undefined) throw permanent(new Error(`document ${item.documentId} does not exist`));
    if (document.body.length > MAX_DOCUMENT_CHARS) {
      throw permanent(new Error(`document ${document.id} is too long to summarise (${document.body.length} characters, limit ${MAX_DOCUMENT_CHARS})`));
    }

    const { maxWords } = item;
    let completion;
    try {
      completion = await this.#llm.complete(
        { prompt: `Summarise this document in at most ${maxWords} words.\n\n${document.title}\n\n${document.body}`, maxTokens: maxWords },
        { signal: ctx.signal },
      );
    } catch (error) {
      if (isRateLimited(error)) throw retryAfter(error.retryAfterMs, error);
      throw error;
    }

    await this.#db
      .insertInto("document_summaries")
      .values({ document_id: document.id, summary: completion.text, model: completion.model, job_id: ctx.job.id })
      .onConflict((conflict) =>
        conflict.column("document_id").doUpdateSet({
          summary: (eb) => eb.ref("excluded.summary"),
          model: (eb) => eb.ref("excluded.model"),
          job_id: (eb) => eb.ref("excluded.job_id"),
          created_at: sql<Date>`now()`,
        }),
      )
      .execute();
    return { documentId: document.id, words: completion.text.split(/\s+/).filter(Boolean).length, model: completion.model };
  }
}
