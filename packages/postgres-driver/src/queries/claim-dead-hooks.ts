import type { ClaimDeadHooksParams, DeadHookClaim } from "@stint/core/driver";
import { sql, type Kysely } from "kysely";
import { deadHooksTable } from "./dead-hooks-table";
import { allJobsView } from "./finished-jobs";
import { JOB_COLUMNS, millisecondsInterval, toJobRecord, type JobRow } from "./job-row";
import { timestampValue } from "./timestamp-value";

/** A claimed `dead_hooks` row with its job's columns (all null when the job is gone). */
type ClaimedHookRow = { [K in keyof JobRow]: JobRow[K] | null } & {
  readonly hook_job_id: string;
  readonly hook_attempt: number;
  readonly hook_deliveries: number;
  readonly hook_died_at: Date | number;
  readonly hook_error_code: string | null;
  readonly hook_last_error: string | null;
};

/**
 * Claims up to `limit` deaths of a queue whose `onDead` hook has not run —
 * never claimed (`locked_until = -infinity`) or claimed by a worker whose
 * claim lapsed — in one statement: each is owned by `workerId` until
 * `now() + leaseMs`, with one more delivery counted, and comes back with its
 * job as stored now, wherever it is — in `finished_jobs` as a dead job, in
 * `jobs` when it was retried since (or died before an upgrade moved it) —
 * or without one, when the job was deleted. Rows locked
 * by another claimer are skipped, and a row another claimer just took no
 * longer matches `locked_until < now()` when it is rechecked, so two
 * workers never both get a death while its claim holds. Never claimed
 * deaths come first, oldest first, then lapsed claims.
 *
 * ### SQL
 * ```sql
 * WITH picked AS MATERIALIZED (
 *   SELECT job_id, attempt FROM "stint"."dead_hooks"
 *    WHERE queue = $1 AND locked_until < now()
 *    ORDER BY locked_until, died_at LIMIT $2 FOR UPDATE SKIP LOCKED),
 * claimed AS (
 *   UPDATE "stint"."dead_hooks" AS hooks
 *      SET locked_by = $3, locked_until = now() + $4 * interval '1 millisecond', deliveries = hooks.deliveries + 1
 *     FROM picked WHERE hooks.job_id = picked.job_id AND hooks.attempt = picked.attempt
 *   RETURNING hooks.job_id AS hook_job_id, hooks.attempt AS hook_attempt, …)
 * SELECT claimed.*, <every column of a job>
 *   FROM claimed
 *   LEFT JOIN LATERAL (SELECT <every column of a job> FROM "stint"."all_jobs" WHERE id = claimed.hook_job_id LIMIT 1) AS jobs ON true
 * ```
 *
 * @example
 * ```ts
 * const claims = await claimDeadHooks(db, "stint", { queue: "send-invoice", workerId, limit: 5, leaseMs: 20_000 });
 * ```
 */
export async function claimDeadHooks(executor: Kysely<any>, schema: string, params: ClaimDeadHooksParams): Promise<readonly DeadHookClaim[]> {
  const hooks = deadHooksTable(schema);
  const { rows } = await sql<ClaimedHookRow>`WITH picked AS MATERIALIZED (
  SELECT job_id, attempt FROM ${hooks}
   WHERE queue = ${params.queue} AND locked_until < now()
   ORDER BY locked_until, died_at
   LIMIT ${params.limit}::integer
   FOR UPDATE SKIP LOCKED
),
claimed AS (
  UPDATE ${hooks} AS hooks
     SET locked_by = ${params.workerId}, locked_until = now() + ${millisecondsInterval(params.leaseMs)}, deliveries = hooks.deliveries + 1
    FROM picked
   WHERE hooks.job_id = picked.job_id AND hooks.attempt = picked.attempt
  RETURNING hooks.job_id AS hook_job_id, hooks.attempt AS hook_attempt, hooks.deliveries AS hook_deliveries,
            hooks.died_at AS hook_died_at, hooks.error_code AS hook_error_code, hooks.last_error AS hook_last_error
)
SELECT claimed.*, ${JOB_COLUMNS}
  FROM claimed
  LEFT JOIN LATERAL (SELECT ${JOB_COLUMNS} FROM ${allJobsView(schema)} WHERE id = claimed.hook_job_id LIMIT 1) AS jobs ON true
 ORDER BY claimed.hook_died_at, claimed.hook_job_id`.execute(executor);
  return Object.freeze(rows.map(toClaim));
}

function toClaim(row: ClaimedHookRow): DeadHookClaim {
  return Object.freeze({
    jobId: String(row.hook_job_id),
    attempt: row.hook_attempt,
    delivery: row.hook_deliveries,
    diedAt: timestampValue(row.hook_died_at),
    errorCode: row.hook_error_code,
    lastError: row.hook_last_error,
    job: row.id === null ? undefined : toJobRecord(row as JobRow),
  });
}
