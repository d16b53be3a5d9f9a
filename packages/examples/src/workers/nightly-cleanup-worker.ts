import { ErrorCode, hasErrorCode, JOB_STORE, LOGGER, SchemaQueueWorker, type BackoffOptions, type JobContext, type JobStore, type Logger } from "@stint/core";
import { sql } from "kysely";
import { inject, injectable } from "tsyringe";
import { APP_DB, RETRY_BACKOFF } from "../app-tokens";
import type { AppDb } from "../app/app-tables";
import { NightlyCleanup, type CleanupTarget } from "../jobs/nightly-cleanup";

/** The table and timestamp column behind each cleanup target. */
const TARGETS = {
  "audit-events": { table: "audit_events", column: "occurred_at" },
  "expired-sessions": { table: "sessions", column: "expires_at" },
  "old-reports": { table: "reports", column: "created_at" },
} as const satisfies Record<CleanupTarget, { table: string; column: string }>;

/** What a `nightly-cleanup` job stores as its result. */
export interface NightlyCleanupResult {
  readonly target: CleanupTarget;
  readonly deleted: number;
  /** Delete statements run (the last one deletes fewer rows than the batch size). */
  readonly batches: number;
}

/**
 * Deletes rows older than a cut-off in bounded batches, so that no
 * statement locks many rows or runs long, and stops between batches when
 * `ctx.signal` fires (timeout, shutdown, or an operator's cancel, after
 * which it says how far it got). Each batch commits on its own,
 * which makes the job safe to stop and repeat: a retry carries on where the
 * last attempt stopped.
 *
 * Each statement picks its batch with `FOR UPDATE SKIP LOCKED`, so two
 * cleanups of the same table share the work instead of waiting on each other:
 *
 * ```sql
 * DELETE FROM "stint"."audit_events" WHERE "id" IN (
 *   SELECT "id" FROM "stint"."audit_events" WHERE "occurred_at" < now() - make_interval(days => $1)
 *   ORDER BY "occurred_at" LIMIT $2 FOR UPDATE SKIP LOCKED)
 * ```
 *
 * @example
 * ```ts
 * await client.enqueue(NightlyCleanup, { target: "audit-events", olderThanDays: 90, batchSize: 1_000 });
 * // job result: { target: "audit-events", deleted: 4200, batches: 5 }
 * ```
 */
@injectable()
export class NightlyCleanupWorker extends SchemaQueueWorker<NightlyCleanup> {
  readonly job = NightlyCleanup;
  readonly #db: AppDb;

  constructor(
    @inject(JOB_STORE) store: JobStore,
    @inject(LOGGER) log: Logger,
    @inject(APP_DB) db: AppDb,
    @inject(RETRY_BACKOFF) backoff: Partial<BackoffOptions>,
  ) {
    super(store, log, { concurrency: 1, leaseMs: 120_000, backoff });
    this.#db = db;
  }

  protected override async processItem(item: NightlyCleanup, ctx: JobContext): Promise<NightlyCleanupResult> {
    const { table, column } = TARGETS[item.target];
    const { batchSize } = item;
    let deleted = 0;
    let batches = 0;
    for (;;) {
      // Stop between batches: what is deleted stays deleted, a retry does the rest.
      if (ctx.signal.aborted) {
        if (hasErrorCode(ctx.signal.reason, ErrorCode.Cancelled)) ctx.log.info(`Cancelled after deleting ${deleted} ${item.target} rows in ${batches} batches`);
        throw ctx.signal.reason;
      }
      const result = await this.#db
        .deleteFrom(table)
        .where("id", "in", (eb) =>
          eb
            .selectFrom(table)
            .select("id")
            .where(eb.ref(column), "<", sql<Date>`now() - make_interval(days => ${item.olderThanDays})`)
            .orderBy(column)
            .limit(batchSize)
            .forUpdate()
            .skipLocked(),
        )
        .executeTakeFirst();
      const count = Number(result.numDeletedRows);
      deleted += count;
      batches += 1;
      if (count < batchSize) break;
    }
    ctx.log.info(`Deleted ${deleted} ${item.target} rows older than ${item.olderThanDays} days in ${batches} batches`);
    return { target: item.target, deleted, batches };
  }
}
