import type { ClaimBatchParams, ClaimedBatch } from "@stint/core/driver";
import { sql, type Kysely, type RawBuilder } from "kysely";
import { leaseLostInsert } from "./attempt-history";
import { CompiledStatements, valueSlot } from "./compiled-statement";
import { claimedBatch, jobsTable, millisecondsInterval, type ClaimedRow } from "./job-row";
import { prepared } from "./prepared";

/**
 * Claims up to `limit` jobs of a queue in one statement: due `queued` and
 * `failed` jobs first (highest priority, then oldest `run_at`, then id),
 * then, to fill the batch, `running` jobs whose lease expired and that have
 * attempts left; for each of those the same statement writes the lapsed
 * attempt's `lease-lost` history row (see `leaseLostInsert`): when no lease
 * expired it is an insert of no rows that reads nothing (a 100-job claim
 * over 50,000 due jobs took a median 2.17 ms with it and 2.15 ms without,
 * `EXPLAIN ANALYZE`, 300 interleaved runs — within the noise). Each becomes `running`, owned by the worker until
 * `now() + leaseMs`, with one more attempt counted. Rows locked by another
 * claimer are skipped, never waited for.
 *
 * Candidates are chosen with `LIMIT … FOR UPDATE SKIP LOCKED`, in the
 * order of `jobs_claim_idx`, so the plan is an index range scan that locks
 * no more rows than it returns, even on a fresh table without statistics.
 * With `takeOverExpired: false` the statement leaves out the expired-lease
 * part: looking costs a scan of `jobs_lease_idx` (about a tenth of a
 * millisecond when a claim finds fewer due jobs than its limit, as every
 * claim of a mostly idle queue does), so a worker asks for it every so often
 * rather than on every claim. Rows come back in the claim index's order. The update finds the picked rows with
 * `id = ANY(ARRAY(…))`, which stays a primary-key index scan however many
 * ids a claim takes and however large the table (a join of the picked ids
 * turns into a hash join over the whole table at a few hundred ids). The
 * statement text is the same on every call, so it is prepared once per
 * connection.
 *
 * ### Durability: a claim commits synchronously
 * A claim could commit without waiting for its WAL flush
 * (`synchronous_commit = off`): if the server crashed before the flush, the
 * claim would be undone and the job would only run again. But the worker has
 * the rows and starts their handlers at once, while the undone claim makes
 * the jobs `queued` again as soon as the server is back — so another worker
 * could claim and run a job that this one still runs, long before its lease
 * deadline. That breaks the one promise the lease makes (no second run while
 * the first may still be going), so claims wait for the flush. With claims
 * of hundreds of rows (see the worker's adaptive prefetch) the wait is
 * shared by all of them: on a 50,000-job drain, turning it off for every
 * statement (claims and outcomes) drained 0–25 % faster over three
 * interleaved runs on a busy two-core machine, not worth a broken lease.
 *
 * ### Queue controls
 * Every claim first looks up the queue's `queues` row, in a materialized
 * CTE of the same statement. Only when the row holds a control (paused, a
 * running cap or a rate limit) does it call `claim_room(queue, limit)`
 * (migration 7) for how many jobs it may take: a paused queue gets 0, a
 * capped or rate-limited one what its cap and tokens allow (claims of that
 * queue take turns on its `queues` row). A queue without controls costs
 * that primary-key lookup alone: the function is joined laterally to the
 * row, so with no row it is never called (calling it anyway cost a
 * claim about 14 µs of its 98 µs execution, `EXPLAIN ANALYZE`, 35 warm
 * runs each). When the controls held the claim back, the statement returns
 * one more row, with a null id, that says why (`hold`).
 *
 * ### SQL
 * ```sql
 * -- every claim: WITH control AS MATERIALIZED (
 * --   SELECT room.* FROM "stint".queues AS q CROSS JOIN LATERAL "stint".claim_room(q.name, $2) AS room
 * --    WHERE q.name = $1 AND (q.paused OR q.max_running IS NOT NULL OR q.rate_limit IS NOT NULL)), …
 * -- and LIMIT COALESCE((SELECT room FROM control), $2) where $2 is shown below
 * -- takeOverExpired: false
 * UPDATE "stint"."jobs" AS jobs
 *    SET state = 'running', locked_by = $3, locked_until = now() + $4 * interval '1 millisecond',
 *        attempts = attempts + 1, started_at = now(), updated_at = now()
 *  WHERE jobs.id = ANY(ARRAY(
 *          SELECT id FROM "stint"."jobs"
 *           WHERE queue = $1 AND state IN ('queued', 'failed') AND run_at <= now()
 *             [AND (timeout_ms IS NULL OR timeout_ms <= $5)]
 *           ORDER BY priority DESC, run_at, id
 *           LIMIT $2 FOR UPDATE SKIP LOCKED))
 * RETURNING jobs.id, jobs.queue, jobs.payload, jobs.meta, jobs.attempts, …,
 *           extract(epoch FROM jobs.created_at) * 1000 AS created_at_ms, … AS run_at_ms
 *
 * -- otherwise: the same update of the due jobs and, to fill the batch, expired ones
 * WITH due AS MATERIALIZED (<the select above>),
 * expired AS MATERIALIZED (
 *   SELECT id, attempts, locked_by, started_at, locked_until FROM "stint"."jobs"
 *    WHERE queue = $1 AND state = 'running' AND locked_until < now() AND attempts < max_attempts
 *      [AND (timeout_ms IS NULL OR timeout_ms <= $5)]
 *    ORDER BY locked_until
 *    LIMIT greatest($2 - (SELECT count(*) FROM due), 0) FOR UPDATE SKIP LOCKED),
 * lease_lost AS (INSERT INTO "stint"."job_attempts" (…) SELECT id, attempts, 'lease-lost', locked_by, … FROM expired)
 * UPDATE … WHERE jobs.id = ANY(ARRAY(SELECT id FROM due UNION ALL SELECT id FROM expired)) RETURNING …
 * ```
 *
 * @example
 * ```ts
 * const jobs = await claimBatch(db, "stint", { queue: "send-invoice", workerId, limit: 10, leaseMs: 60_000 });
 * if (jobs.hold?.paused) console.log("send-invoice is paused");
 * ```
 */
export async function claimBatch(executor: Kysely<any>, schema: string, params: ClaimBatchParams): Promise<ClaimedBatch> {
  const takeOverExpired = params.takeOverExpired !== false;
  const fitsDeadline = params.maxTimeoutMs !== undefined;
  const { rows } = await CLAIMS.execute(
    executor,
    `${schema}:${takeOverExpired}:${fitsDeadline}`,
    () => claimBatchStatement(schema, { ...SLOTS, takeOverExpired, ...(fitsDeadline ? { maxTimeoutMs: valueSlot<number>("maxTimeoutMs") } : {}) }),
    params,
  );
  const held = rows.find((row) => row.held_paused !== null);
  if (held === undefined) return claimedBatch(rows);
  return claimedBatch(
    rows.filter((row) => row !== held),
    { paused: held.held_paused === true, retryAfterMs: held.held_retry_ms },
  );
}

/** The claim statements, compiled once per schema and variant. */
const CLAIMS = new CompiledStatements<ClaimRow>();

/** The values a claim statement is compiled with (and `maxTimeoutMs` in the variant that has it); each call fills them in. */
const SLOTS = {
  queue: valueSlot<string>("queue"),
  workerId: valueSlot<string>("workerId"),
  limit: valueSlot<number>("limit"),
  leaseMs: valueSlot<number>("leaseMs"),
} as const;

/** The claim statement itself (exported for plan tests and `EXPLAIN`). */
export function claimBatchStatement(schema: string, params: ClaimBatchParams): RawBuilder<ClaimRow> {
  const jobs = jobsTable(schema);
  const fitsDeadline = params.maxTimeoutMs === undefined ? sql`` : sql`AND (timeout_ms IS NULL OR timeout_ms <= ${params.maxTimeoutMs}::integer)`;
  const room = sql`COALESCE((SELECT room FROM control), ${params.limit}::integer)`;
  const due = sql`SELECT id FROM ${jobs}
   WHERE queue = ${params.queue} AND state IN ('queued', 'failed') AND run_at <= now() ${fitsDeadline}
   ORDER BY priority DESC, run_at, id
   LIMIT ${room}
   FOR UPDATE SKIP LOCKED`;
  const claim = sql`UPDATE ${jobs} AS jobs
     SET state = 'running',
         locked_by = ${params.workerId},
         locked_until = now() + ${millisecondsInterval(params.leaseMs)},
         attempts = jobs.attempts + 1,
         started_at = now(),
         updated_at = now()`;
  const returning = sql`RETURNING jobs.id, jobs.queue, jobs.payload, jobs.meta, jobs.attempts, jobs.max_attempts, jobs.priority, jobs.timeout_ms,
            (extract(epoch FROM jobs.created_at) * 1000)::float8 AS created_at_ms,
            (extract(epoch FROM jobs.run_at) * 1000)::float8 AS run_at_ms`;
  // The controls' answer when they held the claim back: one more row, with a null id.
  const answer = sql`SELECT *, NULL::boolean AS held_paused, NULL::integer AS held_retry_ms FROM claimed
UNION ALL
SELECT NULL::bigint, ${params.queue}::text, NULL::jsonb, NULL::jsonb, NULL::integer, NULL::integer, NULL::smallint, NULL::integer, NULL::float8, NULL::float8,
       control.paused, control.retry_after_ms
  FROM control WHERE control.paused OR control.retry_after_ms IS NOT NULL`;
  // claim_room takes the queue's name from the row, so it runs only for a queue whose row holds a control.
  const control = sql`control AS MATERIALIZED (
  SELECT room.* FROM ${sql.id(schema, "queues")} AS q CROSS JOIN LATERAL ${sql.id(schema, "claim_room")}(q.name, ${params.limit}::integer) AS room
   WHERE q.name = ${params.queue}::text AND (q.paused OR q.max_running IS NOT NULL OR q.rate_limit IS NOT NULL))`;
  if (params.takeOverExpired === false) {
    return prepared(sql<ClaimRow>`WITH ${control},
claimed AS (
  ${claim}
   WHERE jobs.id = ANY(ARRAY(${due}))
  ${returning}
)
${answer}`);
  }
  return prepared(sql<ClaimRow>`WITH ${control},
due AS MATERIALIZED (
  ${due}
),
expired AS MATERIALIZED (
  SELECT id, attempts, locked_by, started_at, locked_until FROM ${jobs}
   WHERE queue = ${params.queue} AND state = 'running' AND locked_until < now() AND attempts < max_attempts ${fitsDeadline}
   ORDER BY locked_until
   LIMIT greatest(${room} - (SELECT count(*) FROM due), 0)
   FOR UPDATE SKIP LOCKED
),
lease_lost AS (
  ${leaseLostInsert(schema, "expired", sql`'worker ' || ${params.workerId}::text`)}
),
claimed AS (
  ${claim}
   WHERE jobs.id = ANY(ARRAY(SELECT id FROM due UNION ALL SELECT id FROM expired))
  ${returning}
)
${answer}`);
}

/** A claimed job's row, or the one row that says the queue's controls held the claim back (id null). */
type ClaimRow = ClaimedRow & { readonly held_paused: boolean | null; readonly held_retry_ms: number | null };
