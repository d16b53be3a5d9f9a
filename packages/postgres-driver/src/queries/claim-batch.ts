import type { ClaimBatchParams, ClaimedBatch } from "@stint/core/driver";
import { sql, type RawBuilder } from "kysely";
import type { StatementResult, Statements } from "../connection/statement";
import { leaseLostInsert } from "./attempt-history";
import { CONTROLS_APPLY_SQLSTATE } from "../schema/migrations/0011-claim-without-controls";
import { CompiledStatements, valueSlot } from "./compiled-statement";
import { claimedBatch, jobsTable, millisecondsInterval, type ClaimedRow } from "./job-row";
import { notifyJobEvents } from "./notify-job-events";

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
 * rather than on every claim. Rows come back in the claim index's order. The
 * statement text is the same on every call, so it is sent named (prepared once per
 * connection where the runner's mode allows).
 *
 * ### Finding the picked rows
 * A claim without expired leases updates the rows it locked by their
 * position, `ctid = ANY(ARRAY(SELECT ctid … FOR UPDATE SKIP LOCKED))`: a TID
 * scan, which reads each row once whatever the table's size or statistics.
 * Matching their ids instead is a primary-key index scan on an analysed
 * table, but on a new one, without statistics, PostgreSQL plans a bitmap
 * scan of the key that cost a one-job claim 20–40 µs more (`EXPLAIN
 * ANALYZE`, generic plans; at 500 ids the TID scan is also about a tenth
 * faster). A locked row cannot move or change under its lock, so the
 * position still names it when the update reads it. The one difference is
 * a row another transaction changed after the claim's snapshot but before
 * its lock (a `replace` of a queued job's payload): the lock follows it to
 * its new version, which the update's snapshot does not see, so that job is
 * left for the next claim instead of taken now. With expired leases the
 * statement also writes each taken-over attempt's history, which must not
 * happen for a row it then leaves, so that form matches ids, `id =
 * ANY(ARRAY(…))`: still an index scan at any number of ids (a join of the
 * picked ids turns into a hash join over the whole table at a few hundred).
 *
 * ### Durability: a claim does not wait for its WAL flush
 * Unless `synchronousCommit` is set, the claim's transaction commits with
 * `synchronous_commit = off` (set for that transaction alone, by the
 * statement itself): it returns once its changes are in PostgreSQL's WAL
 * buffers, without waiting for them to reach disk. On an idle queue that
 * wait is most of the claim: on a worker idle between jobs it cut 390–440
 * µs from a claim's round trip (400 interleaved claims of each form, 10 ms
 * apart, fsync on), and a job's path from enqueue to handler start pays one
 * enqueue and one claim. The WAL writer flushes it within three
 * `wal_writer_delay`s (600 ms by default), and every later synchronous
 * commit flushes it first (WAL is written in order).
 *
 * What is at stake is the claim only, never a job: a crash of the server (or a
 * failover to a standby) in that window undoes it, and the job is `queued` or
 * `failed` again with its attempt uncounted — it runs again, as after any
 * crash. The one danger is that the worker that got it still runs it while
 * another claims it. The worker guards against that (see
 * `WorkerOptions.durableClaims` in `@stint/core`): it counts a claim as
 * durable only once one of its own later writes has committed synchronously,
 * and when its connection to the server fails before that, it stops the
 * claim's handlers at once, before the server is back. Should the same worker
 * claim such a job again, it gets the same attempt number, and the row is the
 * new claim's: the run stops the older run and writes nothing for it, starts
 * the new one once the older has settled, and the older run's end leaves the
 * newer one's lease alone. `synchronousCommit: true` keeps the wait, for
 * workers whose handlers must never overlap, even across a crash of the
 * database.
 *
 * ### Queue controls
 * A queue's controls (paused, a running cap or a rate limit) live in its
 * `queues` row. A claim sent with them looks the row up in a materialized
 * CTE of the same statement and, only when it holds a control, calls
 * `claim_room(queue, limit)` (migration 7) for how many jobs it may take: a
 * paused queue gets 0, a capped or rate-limited one what its cap and tokens
 * allow (claims of that queue take turns on its `queues` row). It returns
 * one more row, with a null id, that says what the controls did (`hold`
 * when they held the claim back).
 *
 * Most queues have no controls, and that machinery cost a claim about 27 µs
 * of PostgreSQL time on a worker idle between jobs (the CTE and the extra
 * row, beyond the lookup itself; 600 interleaved claims of each form). So a claim of a
 * queue that had none at its last claim is sent without it: its `LIMIT`
 * only checks, in the same statement and snapshot, that the row still
 * holds none, and otherwise calls `controls_apply` (migration 11), which
 * raises `SQ901` before the statement changes anything. The claim is then
 * sent again with the controls, and the queue's claims keep them until one
 * finds the controls gone. Both forms see the row the same way, in the
 * statement's snapshot, so a pause applies to the next claim either way.
 *
 * ### SQL
 * ```sql
 * -- with controls: WITH control AS MATERIALIZED (
 * --   SELECT room.* FROM "stint".queues AS q CROSS JOIN LATERAL "stint".claim_room(q.name, $2) AS room
 * --    WHERE q.name = $1 AND (q.paused OR q.max_running IS NOT NULL OR q.rate_limit IS NOT NULL)), …
 * -- and LIMIT COALESCE((SELECT room FROM control), $2) where $2 is shown below, and the control row after the claimed ones;
 * -- without: LIMIT CASE WHEN EXISTS (SELECT FROM "stint".queues AS q WHERE q.name = $1 AND (<a control>))
 * --                THEN "stint".controls_apply($1) ELSE $2 END
 * -- takeOverExpired: false
 * UPDATE "stint"."jobs" AS jobs
 *    SET state = 'running', locked_by = $3, locked_until = now() + $4 * interval '1 millisecond',
 *        attempts = attempts + 1, started_at = now(), updated_at = now()
 *  WHERE jobs.ctid = ANY(ARRAY(
 *          SELECT ctid FROM "stint"."jobs"
 *           WHERE queue = $1 AND state IN ('queued', 'failed') AND run_at <= now()
 *             [AND (timeout_ms IS NULL OR timeout_ms <= $5)]
 *           ORDER BY priority DESC, run_at, id
 *           LIMIT $2 FOR UPDATE SKIP LOCKED))
 *    [AND (SELECT set_config('synchronous_commit', 'off', true)) = 'off']   -- unless synchronousCommit
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
 *
 * -- every form runs the update as the CTE claimed and tells job-event listeners (see notifyJobEvents):
 * SELECT claimed.* FROM claimed WHERE (CASE WHEN EXISTS (SELECT FROM "stint".job_event_listeners …) THEN (SELECT "stint".notify_job_events(…) FROM claimed) ELSE 0 END) >= 0
 * ```
 *
 * @example
 * ```ts
 * const jobs = await claimBatch(runner, "stint", { queue: "send-invoice", workerId, limit: 10, leaseMs: 60_000 }, controlledQueues);
 * if (jobs.hold?.paused) console.log("send-invoice is paused");
 * ```
 */
export async function claimBatch(statements: Statements, schema: string, params: ClaimBatchParams, controlled: ControlledQueues): Promise<ClaimedBatch> {
  if (!controlled.has(params.queue)) {
    try {
      return claimedBatch((await runClaim(statements, schema, params, false)).rows);
    } catch (thrown) {
      if ((thrown as { code?: unknown } | null)?.code !== CONTROLS_APPLY_SQLSTATE) throw thrown;
      controlled.add(params.queue);
    }
  }
  const { rows } = await runClaim(statements, schema, params, true);
  const control = rows.find((row) => row.held_paused !== null);
  if (control === undefined) {
    controlled.delete(params.queue);
    return claimedBatch(rows);
  }
  const jobs = rows.filter((row) => row !== control);
  if (control.held_paused !== true && control.held_retry_ms === null) return claimedBatch(jobs);
  return claimedBatch(jobs, { paused: control.held_paused === true, retryAfterMs: control.held_retry_ms });
}

/**
 * The queues whose last claim found controls on them (see {@link claimBatch});
 * one set per store. A queue wrongly left out costs one refused statement;
 * one wrongly kept costs the controls' lookup until its next claim.
 */
export type ControlledQueues = Set<string>;

function runClaim(statements: Statements, schema: string, params: ClaimBatchParams, withControls: boolean): Promise<StatementResult<ClaimRow>> {
  const takeOverExpired = params.takeOverExpired !== false;
  const fitsDeadline = params.maxTimeoutMs !== undefined;
  const synchronousCommit = params.synchronousCommit === true;
  const statement = CLAIMS.statement(
    `${schema}:${takeOverExpired}:${fitsDeadline}:${withControls}:${synchronousCommit}`,
    () =>
      claimBatchStatement(
        schema,
        { ...SLOTS, takeOverExpired, synchronousCommit, ...(fitsDeadline ? { maxTimeoutMs: valueSlot<number>("maxTimeoutMs") } : {}) },
        withControls,
      ),
    params,
  );
  return statements.run<ClaimRow>(statement);
}

/** The claim statements, compiled once per schema and variant. */
const CLAIMS = new CompiledStatements();

/** The values a claim statement is compiled with (and `maxTimeoutMs` in the variant that has it); each call fills them in. */
const SLOTS = {
  queue: valueSlot<string>("queue"),
  workerId: valueSlot<string>("workerId"),
  limit: valueSlot<number>("limit"),
  leaseMs: valueSlot<number>("leaseMs"),
} as const;

/**
 * The claim statement itself (exported for plan tests and `EXPLAIN`):
 * with the queue's controls applied, or (`withControls: false`) with a
 * check that the queue has none, which raises `SQ901` when it does.
 */
export function claimBatchStatement(schema: string, params: ClaimBatchParams, withControls = true): RawBuilder<ClaimRow> {
  const jobs = jobsTable(schema);
  const fitsDeadline = params.maxTimeoutMs === undefined ? sql`` : sql`AND (timeout_ms IS NULL OR timeout_ms <= ${params.maxTimeoutMs}::integer)`;
  const hasControls = sql`q.name = ${params.queue}::text AND (q.paused OR q.max_running IS NOT NULL OR q.rate_limit IS NOT NULL)`;
  const room = withControls
    ? sql`COALESCE((SELECT room FROM control), ${params.limit}::integer)`
    : sql`CASE WHEN EXISTS (SELECT FROM ${sql.id(schema, "queues")} AS q WHERE ${hasControls})
          THEN ${sql.id(schema, "controls_apply")}(${params.queue}::text) ELSE ${params.limit}::integer END`;
  const pickDue = (column: "id" | "ctid"): RawBuilder<unknown> => sql`SELECT ${sql.raw(column)} FROM ${jobs}
   WHERE queue = ${params.queue} AND state IN ('queued', 'failed') AND run_at <= now() ${fitsDeadline}
   ORDER BY priority DESC, run_at, id
   LIMIT ${room}
   FOR UPDATE SKIP LOCKED`;
  const due = pickDue("id");
  // Without expired leases the picked rows are found where they lie (see "Finding the picked rows" above).
  // Unless asked to wait, the claim's transaction does not wait for its WAL flush (see "Durability" above): an
  // uncorrelated subquery, run once before the update reads a row.
  const commit = params.synchronousCommit === true ? sql`` : sql`AND (SELECT set_config('synchronous_commit', 'off', true)) = 'off'`;
  const picked = sql`jobs.ctid = ANY(ARRAY(${pickDue("ctid")})) ${commit}`;
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
  // Job-event listeners hear of the claimed jobs (see notifyJobEvents) in a condition true for every row: uncorrelated,
  // it runs once, before the rows, and adds no join to the answer.
  const notified = sql`WHERE ${notifyJobEvents(schema, sql`claimed`, { kind: sql`'started'`, attempt: sql.ref("attempts") })} >= 0`;
  // With controls, the claimed rows and one more, with a null id, that says what the controls did.
  const answer = withControls
    ? sql`SELECT claimed.*, NULL::boolean AS held_paused, NULL::integer AS held_retry_ms FROM claimed ${notified}
UNION ALL
SELECT NULL::bigint, ${params.queue}::text, NULL::jsonb, NULL::jsonb, NULL::integer, NULL::integer, NULL::smallint, NULL::integer, NULL::float8, NULL::float8,
       control.paused, control.retry_after_ms
  FROM control`
    : sql`SELECT claimed.* FROM claimed ${notified}`;
  // claim_room takes the queue's name from the row, so it runs only for a queue whose row holds a control.
  const control = withControls
    ? sql`control AS MATERIALIZED (
  SELECT room.* FROM ${sql.id(schema, "queues")} AS q CROSS JOIN LATERAL ${sql.id(schema, "claim_room")}(q.name, ${params.limit}::integer) AS room
   WHERE ${hasControls}),`
    : sql``;
  if (params.takeOverExpired === false) {
    return sql<ClaimRow>`WITH ${control}
claimed AS (
  ${claim}
   WHERE ${picked}
  ${returning}
)
${answer}`;
  }
  return sql<ClaimRow>`WITH ${control}
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
   WHERE jobs.id = ANY(ARRAY(SELECT id FROM due UNION ALL SELECT id FROM expired)) ${commit}
  ${returning}
)
${answer}`;
}

/** A claimed job's row, or the one row that says what the queue's controls did (id null; `held_*` null in claimed rows). */
type ClaimRow = ClaimedRow & { readonly held_paused: boolean | null; readonly held_retry_ms: number | null };
