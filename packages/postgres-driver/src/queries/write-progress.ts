import type { ProgressWrite } from "@stint/core/driver";
import { sql } from "kysely";
import type { Statements } from "../connection/statement";
import { jobsTable } from "./job-row";
import { namedStatement } from "./named-statement";

/**
 * Stores a running attempt's latest progress on its job, fenced like an
 * outcome (id, attempt, owner, state `running`); true when it applied.
 * `progress` is in no index, so the update is usually HOT.
 *
 * ### SQL
 * ```sql
 * UPDATE "stint"."jobs" SET progress = $4::jsonb, updated_at = now()
 *  WHERE id = $1 AND attempts = $2 AND locked_by = $3 AND state = 'running'
 * RETURNING id
 * ```
 *
 * @example
 * ```ts
 * await writeProgress(runner, "stint", { workerId, job: { id: "812", attempt: 2 }, progressJson: '{"done":40,"of":100}' });
 * ```
 */
export async function writeProgress(statements: Statements, schema: string, params: ProgressWrite): Promise<boolean> {
  const { rows } = await statements.run<{ id: string }>(
    namedStatement(sql`UPDATE ${jobsTable(schema)}
   SET progress = ${params.progressJson}::jsonb, updated_at = now()
 WHERE id = ${params.job.id}::bigint AND attempts = ${params.job.attempt}::integer
   AND locked_by = ${params.workerId} AND state = 'running'
RETURNING id`),
  );
  return rows.length > 0;
}
