import type { ProgressWrite } from "@stint/core/driver";
import { sql } from "kysely";
import type { Statements } from "../connection/statement";
import { jobsTable } from "./job-row";
import { namedStatement } from "./named-statement";
import { joinNotifying } from "./notify-job-events";

/**
 * Stores a running attempt's latest progress on its job, fenced like an
 * outcome (id, attempt, owner, state `running`); true when it applied.
 * `progress` is in no index, so the update is usually HOT. Job-event
 * listeners hear of it with the value when it is small (see `notifyJobEvents`).
 *
 * ### SQL
 * ```sql
 * WITH written AS (
 *   UPDATE "stint"."jobs" SET progress = $4::jsonb, updated_at = now()
 *    WHERE id = $1 AND attempts = $2 AND locked_by = $3 AND state = 'running'
 *   RETURNING id, queue, attempts, progress)
 * SELECT written.id FROM written
 *  CROSS JOIN (SELECT <only while a listener is live> "stint".notify_job_events(array_agg('progress'), …, array_agg(progress)) FROM written) AS notified
 * ```
 *
 * @example
 * ```ts
 * await writeProgress(runner, "stint", { workerId, job: { id: "812", attempt: 2 }, progressJson: '{"done":40,"of":100}' });
 * ```
 */
export async function writeProgress(statements: Statements, schema: string, params: ProgressWrite): Promise<boolean> {
  const { rows } = await statements.run<{ id: string }>(
    namedStatement(sql`WITH written AS (
  UPDATE ${jobsTable(schema)}
     SET progress = ${params.progressJson}::jsonb, updated_at = now()
   WHERE id = ${params.job.id}::bigint AND attempts = ${params.job.attempt}::integer
     AND locked_by = ${params.workerId} AND state = 'running'
  RETURNING id, queue, attempts, progress
)
SELECT written.id FROM written
 ${joinNotifying(schema, sql`written`, { kind: sql`'progress'`, attempt: sql.ref("attempts"), detail: sql.ref("progress") })}`),
  );
  return rows.length > 0;
}
