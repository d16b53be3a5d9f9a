import type { DeleteEffectsBeforeParams } from "@stint/core/driver";
import { sql, type Kysely } from "kysely";
import { millisecondsInterval } from "./job-row";

/**
 * Deletes at most `limit` rows of the effects ledger recorded before
 * `now() - olderThanMs`, oldest first, and returns how many. Candidates come
 * from `effects_created_at_idx`; rows another transaction holds are skipped.
 * A deleted key can run its effect again, so keep rows longer than any job
 * that could repeat the key may take to run (retries included).
 *
 * ### SQL
 * ```sql
 * WITH doomed AS MATERIALIZED (
 *   SELECT key FROM "stint"."effects" WHERE created_at < now() - $1 * interval '1 millisecond'
 *    ORDER BY created_at LIMIT $2 FOR UPDATE SKIP LOCKED),
 * deleted AS (DELETE FROM "stint"."effects" AS effects USING doomed WHERE effects.key = doomed.key RETURNING 1)
 * SELECT count(*) AS deleted FROM deleted
 * ```
 *
 * @example
 * ```ts
 * const month = 30 * 86_400_000;
 * while ((await deleteEffectsBefore(db, "stint", { olderThanMs: month, limit: 1_000 })) === 1_000);
 * ```
 */
export async function deleteEffectsBefore(executor: Kysely<any>, schema: string, params: DeleteEffectsBeforeParams): Promise<number> {
  const effects = sql.id(schema, "effects");
  const { rows } = await sql<{ deleted: string }>`WITH doomed AS MATERIALIZED (
  SELECT key FROM ${effects}
   WHERE created_at < now() - ${millisecondsInterval(params.olderThanMs)}
   ORDER BY created_at
   LIMIT ${params.limit}::integer
   FOR UPDATE SKIP LOCKED
),
deleted AS (
  DELETE FROM ${effects} AS effects USING doomed WHERE effects.key = doomed.key RETURNING 1
)
SELECT count(*) AS deleted FROM deleted`.execute(executor);
  return Number(rows[0]?.deleted ?? 0);
}
