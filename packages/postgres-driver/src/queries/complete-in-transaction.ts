import type { CompleteInTransactionParams, TransactionalCompletion } from "@stint/core/driver";
import type { Kysely, Transaction } from "kysely";
import { runCallback } from "./callback-failure";
import { appliedIds, completeJobsStatement } from "./complete-jobs";

/** Thrown inside the transaction to roll it back when the fence matched no row. */
class AttemptNotOwned extends Error {}

/**
 * Runs `work` and then marks the attempt `succeeded` with its result, in
 * one transaction: the job's own writes and its completion commit together
 * or not at all. The completion is the fenced statement of `completeJobs`
 * for one job (id, owner, attempt, state `running`), with the duration
 * measured on the database clock from the attempt's `started_at`. If it
 * matches no row — another worker reclaimed the job, it was rescued or
 * cancelled — the transaction is rolled back, `work`'s writes with it, and
 * `applied` is false.
 *
 * A throw from `work` rolls back and propagates wrapped in a
 * `CallbackFailure` (the store unwraps it).
 *
 * ### SQL
 * ```sql
 * BEGIN;
 * -- work's own statements, then the completion of completeJobs for one job:
 * UPDATE "stint"."jobs" AS jobs SET state = 'succeeded', … FROM unnest(…) AS done(…)
 *  WHERE jobs.id = done.id AND jobs.attempts = done.attempt AND jobs.locked_by = $1 AND (jobs.state = 'running') IS TRUE
 * RETURNING jobs.id;
 * COMMIT; -- or ROLLBACK when no row matched
 * ```
 *
 * @example
 * ```ts
 * const { applied } = await completeInTransaction(db, "stint", { workerId, job, resultJson: JSON.stringify },
 *   async (trx) => trx.insertInto("ledger").values(entry).execute());
 * ```
 */
export async function completeInTransaction(
  executor: Kysely<any>,
  schema: string,
  params: CompleteInTransactionParams,
  work: (transaction: Transaction<any>) => Promise<unknown>,
): Promise<TransactionalCompletion> {
  const { job } = params;
  try {
    return await executor.transaction().execute(async (trx) => {
      const value = await runCallback(() => work(trx));
      const completion = { id: job.id, attempt: job.attempt, resultJson: params.resultJson(value), durationMs: null };
      const { rows } = await completeJobsStatement(schema, params.workerId, [completion]).execute(trx);
      if (appliedIds(rows[0]).length === 0) throw new AttemptNotOwned();
      return Object.freeze({ applied: true, value });
    });
  } catch (thrown) {
    if (thrown instanceof AttemptNotOwned) return Object.freeze({ applied: false, value: undefined });
    throw thrown;
  }
}
