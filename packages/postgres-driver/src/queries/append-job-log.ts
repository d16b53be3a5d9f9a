import { MAX_JOB_LOG_BYTES, MAX_JOB_LOG_LINES } from "@stint/core";
import type { JobLogAppend } from "@stint/core/driver";
import { sql } from "kysely";
import type { Statements } from "../connection/statement";
import { jobsTable } from "./job-row";
import { jobLogsTable } from "./list-job-logs";
import { namedStatement } from "./named-statement";
import { joinNotifying } from "./notify-job-events";

/** Added lines sort after every stored one: stored positions are at most a few hundred. */
const ADDED_LINES_FROM = 1_000_000;

/**
 * Appends a running attempt's `ctx.log` lines to its row of `job_logs`,
 * fenced like an outcome (id, attempt, owner, state `running`); true when
 * it applied. The stored lines and the new ones are trimmed to the newest
 * `MAX_JOB_LOG_LINES` within `MAX_JOB_LOG_BYTES` (each line measured as
 * its `jsonb` text), and `dropped_lines` counts what went. The job row is
 * read `FOR SHARE`, so a takeover of the lease waits for the append, then
 * the fence no longer matches. Job-event listeners hear of it as a `log`
 * event carrying the number of lines added. Only attempts that log run it.
 *
 * ### SQL
 * ```sql
 * WITH held AS (SELECT id, attempts FROM "stint"."jobs"
 *                WHERE id = $1 AND attempts = $2 AND locked_by = $3 AND state = 'running' FOR SHARE),
 * existing AS (SELECT l.lines, l.dropped_lines FROM "stint"."job_logs" AS l JOIN held ON …),
 * merged AS (… the stored lines, then unnest($4::text[]) …),
 * ranked AS (… count and bytes from the newest line back …),
 * kept AS (SELECT jsonb_agg(line ORDER BY pos) … WHERE from_end <= 100 AND tail_bytes <= 32768)
 * written AS (INSERT INTO "stint"."job_logs" (job_id, attempt, lines, dropped_lines) SELECT … FROM held, kept
 *            ON CONFLICT (job_id, attempt) DO UPDATE SET lines = EXCLUDED.lines, dropped_lines = EXCLUDED.dropped_lines, updated_at = now()
 *            RETURNING job_id, attempt)
 * SELECT written.job_id FROM written
 *  CROSS JOIN (SELECT <only while a listener is live> "stint".notify_job_events(array_agg('log'), …, array_agg(<lines added>)) FROM written JOIN held …) AS notified
 * ```
 *
 * @example
 * ```ts
 * await appendJobLog(runner, "stint", { workerId, job: { id: "812", attempt: 2 }, linesJson: ['{"at":"…","message":"Uploaded"}'], droppedLines: 0 });
 * ```
 */
export async function appendJobLog(statements: Statements, schema: string, params: JobLogAppend): Promise<boolean> {
  const logs = jobLogsTable(schema);
  const { rows } = await statements.run<{ job_id: string }>(
    namedStatement(sql`WITH held AS (
  SELECT id, attempts, queue FROM ${jobsTable(schema)}
   WHERE id = ${params.job.id}::bigint AND attempts = ${params.job.attempt}::integer
     AND locked_by = ${params.workerId} AND state = 'running'
   FOR SHARE
),
existing AS (
  SELECT l.lines, l.dropped_lines FROM ${logs} AS l JOIN held ON l.job_id = held.id AND l.attempt = held.attempts
),
merged AS (
  SELECT stored.line, stored.pos FROM existing CROSS JOIN LATERAL jsonb_array_elements(existing.lines) WITH ORDINALITY AS stored(line, pos)
  UNION ALL
  SELECT added.line::jsonb, ${sql.lit(ADDED_LINES_FROM)} + added.pos FROM unnest(${[...params.linesJson]}::text[]) WITH ORDINALITY AS added(line, pos)
),
ranked AS (
  SELECT line, pos,
         count(*) OVER newest_first AS from_end,
         sum(octet_length(line::text)) OVER newest_first AS tail_bytes
    FROM merged
  WINDOW newest_first AS (ORDER BY pos DESC ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)
),
kept AS (
  SELECT coalesce(jsonb_agg(line ORDER BY pos), '[]'::jsonb) AS lines, count(*) AS n
    FROM ranked
   WHERE from_end <= ${sql.lit(MAX_JOB_LOG_LINES)} AND tail_bytes <= ${sql.lit(MAX_JOB_LOG_BYTES)}
),
written AS (
  INSERT INTO ${logs} AS logs (job_id, attempt, lines, dropped_lines)
  SELECT held.id, held.attempts, kept.lines,
         coalesce((SELECT dropped_lines FROM existing), 0) + ${params.droppedLines}::integer + (SELECT count(*) FROM merged)::integer - kept.n::integer
    FROM held CROSS JOIN kept
  ON CONFLICT (job_id, attempt) DO UPDATE SET lines = EXCLUDED.lines, dropped_lines = EXCLUDED.dropped_lines, updated_at = now()
  RETURNING job_id, attempt
)
SELECT written.job_id FROM written
 ${joinNotifying(schema, sql`written JOIN held ON held.id = written.job_id`, {
   kind: sql`'log'`,
   id: sql.ref("written.job_id"),
   queue: sql.ref("held.queue"),
   attempt: sql.ref("written.attempt"),
   detail: sql`to_jsonb(${params.linesJson.length}::integer)`,
 })}`),
  );
  return rows.length > 0;
}
