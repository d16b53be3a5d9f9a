import type { EffectOutcome, RunEffectOnceParams } from "@stint/core/driver";
import { sql, type Kysely, type Transaction } from "kysely";
import { runCallback } from "./callback-failure";

/**
 * Runs `effect` at most once per key, in one transaction:
 *
 * 1. insert the key into the ledger. The primary key makes a concurrent
 *    holder of the same key wait here until that holder commits (then
 *    nothing is inserted) or rolls back (then this insert goes ahead);
 * 2. inserted → run `effect` with the transaction, store its result and
 *    commit: the ledger row and every write made through the transaction
 *    commit together;
 * 3. not inserted → read the recorded result; `effect` is not called.
 *
 * If `effect` throws, the transaction rolls back — the key is free again
 * and the effect's writes are gone — and its error propagates wrapped in a
 * `CallbackFailure` (the store unwraps it).
 *
 * ### SQL
 * ```sql
 * BEGIN;
 * INSERT INTO "stint"."effects" (key, job_id) VALUES ($1, $2) ON CONFLICT (key) DO NOTHING RETURNING key;
 * -- inserted: the effect's own statements, then
 * UPDATE "stint"."effects" SET result = $1::jsonb WHERE key = $2;
 * -- not inserted:
 * SELECT result, result IS NULL AS empty FROM "stint"."effects" WHERE key = $1;
 * COMMIT;
 * ```
 *
 * @example
 * ```ts
 * const { ran, result } = await runEffectOnce(db, "stint", { key: "invoice:812:email", jobId: "812", resultJson: JSON.stringify },
 *   async (trx) => mailer.send(mail));
 * ```
 */
export function runEffectOnce(
  executor: Kysely<any>,
  schema: string,
  params: RunEffectOnceParams,
  effect: (transaction: Transaction<any>) => Promise<unknown>,
): Promise<EffectOutcome> {
  const effects = sql.id(schema, "effects");
  return executor.transaction().execute(async (trx) => {
    const { rows: inserted } = await sql<{ key: string }>`INSERT INTO ${effects} (key, job_id)
VALUES (${params.key}, ${params.jobId}::bigint)
ON CONFLICT (key) DO NOTHING
RETURNING key`.execute(trx);
    if (inserted.length === 0) {
      const { rows } = await sql<{ result: unknown; empty: boolean }>`SELECT result, result IS NULL AS empty
  FROM ${effects} WHERE key = ${params.key}`.execute(trx);
      const row = rows[0];
      return Object.freeze({ ran: false, result: row === undefined || row.empty ? undefined : row.result });
    }
    const value = await runCallback(() => effect(trx));
    await sql`UPDATE ${effects} SET result = ${params.resultJson(value)}::jsonb WHERE key = ${params.key}`.execute(trx);
    return Object.freeze({ ran: true, result: value });
  });
}
