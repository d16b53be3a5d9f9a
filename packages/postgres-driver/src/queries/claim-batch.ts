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
 * attempts left, writing each lapsed attempt's `lease-lost` history row
 * (see `leaseLostInsert`; when no lease expired that insert reads nothing).
 * Each becomes `running`, owned by the worker until `now() + leaseMs`, with
 * one more attempt counted. Rows locked by another claimer are skipped,
 * never waited for: candidates come from `LIMIT … FOR UPDATE SKIP LOCKED` in
 * the order of `jobs_claim_idx`, an index range scan that locks no more rows
 * than it returns. Rows come back in that order.
 *
 * With `takeOverExpired: false` the expired-lease part is left out: the
 * scan of `jobs_lease_idx` it costs is worth paying every so often, not on
 * every claim of a mostly idle queue. The statement text is the same on
 * every call, so it is sent named (prepared once per connection where the
 * runner's mode allows).
 *
 * Why the picked rows are found by `ctid` (or by id when leases are taken
 * over), why the claim commits without waiting for its WAL flush (unless
 * `durable`), and how a queue's controls are applied only to
 * queues that have them (`controlled`, `SQ901`): docs/schema.md, "The
 * claim", which also sketches the statement's SQL.
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
      return claimedBatch((await runClaim(statements, schema, params, "plain")).rows);
    } catch (thrown) {
      if ((thrown as { code?: unknown } | null)?.code !== CONTROLS_APPLY_SQLSTATE) throw thrown;
      controlled.set(params.queue, CONTROLLED);
    }
  }
  const path = controlled.get(params.queue) ?? CONTROLLED;
  const mode = path.grouped ? "grouped" : "controlled";
  const { rows } = await runClaim(statements, schema, params, mode, path.grouped ? path.after : null);
  const control = rows.find((row) => row.held_paused !== null);
  if (control === undefined) {
    controlled.delete(params.queue);
    return claimedBatch(rows);
  }
  const jobs = rows.filter((row) => row !== control);
  if (path.grouped && control.held_after !== null && control.held_after !== undefined) {
    controlled.set(params.queue, { grouped: true, after: control.held_after });
  }
  if ((control.held_grouped === true) !== path.grouped) {
    // The queue gained its first group since the last claim: from now on it takes turns among groups. What this claim
    // left of its limit is asked for at once, the grouped way, rather than left to the next wake-up.
    controlled.set(params.queue, control.held_grouped === true ? { grouped: true, after: null } : CONTROLLED);
    if (jobs.length < params.limit && control.held_paused !== true) {
      const more = await claimBatch(statements, schema, { ...params, limit: params.limit - jobs.length }, controlled);
      return Object.freeze(Object.assign([...claimedBatch(jobs), ...more], more.hold === undefined ? {} : { hold: more.hold }));
    }
  }
  if (control.held_paused !== true && control.held_retry_ms === null) return claimedBatch(jobs);
  return claimedBatch(jobs, { paused: control.held_paused === true, retryAfterMs: control.held_retry_ms });
}

/**
 * How each queue's last claim found it (see {@link claimBatch}); one map per
 * store. A queue missing here has no controls and no groups as far as this
 * store knows: it is claimed with the plain statement, which refuses
 * (`SQ901`) when that is no longer true. A queue wrongly left out costs one
 * refused statement; one wrongly kept costs the controls' lookup until its
 * next claim.
 */
export type ControlledQueues = Map<string, ClaimPath>;

/**
 * How a queue is claimed: with its controls, or with them and turns among
 * its groups, starting after the group the store's previous claim of the
 * queue took last (`after`; `null` from the first group).
 */
export type ClaimPath = { readonly grouped: false } | { readonly grouped: true; readonly after: string | null };

const CONTROLLED: ClaimPath = Object.freeze({ grouped: false });

/** Which claim statement runs: without controls, with them, or with them and turns among groups. */
type ClaimMode = "plain" | "controlled" | "grouped";

function runClaim(
  statements: Statements,
  schema: string,
  params: ClaimBatchParams,
  mode: ClaimMode,
  after: string | null = null,
): Promise<StatementResult<ClaimRow>> {
  const takeOverExpired = params.takeOverExpired !== false;
  const fitsDeadline = params.maxTimeoutMs !== undefined;
  const durable = params.durable === true;
  const statement = CLAIMS.statement(
    `${schema}:${takeOverExpired}:${fitsDeadline}:${mode}:${durable}`,
    () =>
      claimBatchStatement(
        schema,
        { ...SLOTS, takeOverExpired, durable, ...(fitsDeadline ? { maxTimeoutMs: valueSlot<number>("maxTimeoutMs") } : {}) },
        mode,
        valueSlot<string | null>("after"),
      ),
    // Only the grouped statement reads `after`: the others take the claim's own values, with nothing copied.
    mode === "grouped" ? { ...params, after } : params,
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
 * The claim statement itself (exported for plan tests and `EXPLAIN`), in
 * one of three modes:
 * - `"plain"`: with a check that the queue has no controls and no groups,
 *   which raises `SQ901` when it has;
 * - `"controlled"`: the queue's controls applied (`claim_room`);
 * - `"grouped"`: the controls applied, and the room shared among the
 *   queue's groups and serial lines (`claim_group_turns`, see
 *   `claimGroupTurnsFunction`): each group's due jobs are one range of
 *   `jobs_claim_idx`, each line's head one entry of `jobs_line_idx`.
 *
 * In the first two only jobs without a group are claimed (`group_key =
 * ''`, the claim index's first range of the queue). `after` (grouped mode
 * only): the group after which the turns start, `null` for the first.
 */
export function claimBatchStatement(
  schema: string,
  params: ClaimBatchParams,
  mode: ClaimMode = "controlled",
  after: string | null = null,
): RawBuilder<ClaimRow> {
  const jobs = jobsTable(schema);
  const withControls = mode !== "plain";
  const fitsDeadline = params.maxTimeoutMs === undefined ? sql`` : sql`AND (timeout_ms IS NULL OR timeout_ms <= ${params.maxTimeoutMs}::integer)`;
  // No attempt starts after a job's start-by deadline; the expiry sweep cancels such jobs (see cancelExpiredJobs). A
  // follow-up run waits while the job it follows is active. OFFSET 0 keeps the lookup a primary-key probe made only for
  // a row that follows another: without it the planner may hash the whole of jobs once per claim instead.
  const notExpired = (row: RawBuilder<unknown>): RawBuilder<unknown> => sql`AND (${row}.start_by IS NULL OR ${row}.start_by > now())
     AND (${row}.follows IS NULL OR NOT EXISTS (SELECT FROM ${jobs} AS followed
                                          WHERE followed.id = ${row}.follows AND followed.state IN ('queued', 'running', 'failed') OFFSET 0))`;
  const hasControls = sql`q.name = ${params.queue}::text AND (q.paused OR q.max_running IS NOT NULL OR q.rate_limit IS NOT NULL OR q.grouped)`;
  const limit = sql`${params.limit}::integer`;
  const room = withControls ? sql`COALESCE((SELECT room FROM control), ${limit})` : limit;
  // Without controls, the check that the queue still has none: evaluated once, before the scan reads a row.
  const noControls = withControls
    ? sql``
    : sql`AND (SELECT CASE WHEN EXISTS (SELECT FROM ${sql.id(schema, "queues")} AS q WHERE ${hasControls})
                          THEN ${sql.id(schema, "controls_apply")}(${params.queue}::text) ELSE 0 END) = 0`;
  // The planner cannot know the room a subquery gives: it takes a tenth of the queue's due rows, and a claim of a
  // queue with a backlog of a few hundred thousand jobs would cost it enough to be compiled to machine code (JIT) on
  // every call, which takes longer than the claim. The claim's own limit, a parameter, bounds the estimate.
  const atMostLimit = (select: RawBuilder<unknown>): RawBuilder<unknown> => (withControls ? sql`SELECT * FROM (${select}) AS bounded LIMIT ${limit}` : select);
  const pickDue = (column: "id" | "ctid"): RawBuilder<unknown> =>
    atMostLimit(sql`SELECT ${sql.raw(column)} FROM ${jobs}
   WHERE queue = ${params.queue} AND group_key = '' AND state IN ('queued', 'failed') AND run_at <= now() ${fitsDeadline} ${notExpired(jobs)} ${noControls}
   ORDER BY priority DESC, run_at, id
   LIMIT ${room}
   FOR UPDATE SKIP LOCKED`);
  const dueColumn = params.takeOverExpired === false ? "ctid" : "id";
  const due = mode === "grouped" ? atMostLimit(dueByTurns(schema, params, room, sql`${fitsDeadline} ${notExpired(sql.id("j"))}`, dueColumn)) : pickDue("id");
  // Without expired leases the picked rows are found where they lie, in the grouped claim as in the others (see
  // docs/schema.md, "The claim").
  // Unless asked to wait, the claim's transaction does not wait for its WAL flush (see docs/schema.md, "The claim"): an
  // uncorrelated subquery, run once before the update reads a row.
  const commit = params.durable === true ? sql`` : sql`AND (SELECT set_config('synchronous_commit', 'off', true)) = 'off'`;
  const picked = sql`jobs.ctid = ANY(ARRAY(${pickDue("ctid")})) ${commit}`;
  const claim = sql`UPDATE ${jobs} AS jobs
     SET state = 'running',
         locked_by = ${params.workerId},
         locked_until = now() + ${millisecondsInterval(params.leaseMs)},
         attempts = jobs.attempts + 1,
         started_at = now(),
         updated_at = now()`;
  // date_part, not extract: extract returns numeric, whose arithmetic is a measurable part of a claim's time per row,
  // and the float8 date_part returns gives the same milliseconds (see docs/benchmarks.md, Figures behind the code).
  const returning = sql`RETURNING jobs.id, jobs.queue, jobs.payload, jobs.meta, jobs.attempts, jobs.max_attempts, jobs.priority, jobs.timeout_ms, jobs.workflow_id,
            date_part('epoch', jobs.created_at) * 1000 AS created_at_ms,
            date_part('epoch', jobs.run_at) * 1000 AS run_at_ms`;
  // Job-event listeners hear of the claimed jobs (see notifyJobEvents) in a condition true for every row: uncorrelated,
  // it runs once, before the rows, and adds no join to the answer.
  const notified = sql`WHERE ${notifyJobEvents(schema, sql`claimed`, { kind: sql`'started'`, attempt: sql.ref("attempts") })} >= 0`;
  // A grouped claim that found every group in its reach held by other claims asks again soon rather than at the next
  // wake-up, if a group could start a job at all; when none could (nothing due, lines held), the queue is empty as far
  // as claims go: the answer says so, and a drain ends (the check runs only then, after the turns came back empty).
  const retryAfter =
    mode === "grouped"
      ? sql`COALESCE(control.retry_after_ms, CASE WHEN control.room > 0 AND NOT EXISTS (SELECT FROM turns) AND ${startableGroup(schema, params)}
                                                  THEN ${sql.lit(GROUPS_BUSY_RETRY_MS)}::integer END)`
      : sql`control.retry_after_ms`;
  // Where the claimer's next grouped claim starts: after the last group this one took a job from, or, when it took none,
  // after the last group it looked at.
  const nextTurn = sql`COALESCE((SELECT turn_key FROM turns WHERE turn_no = (SELECT max(turn_no) FROM due)),
                               (SELECT turn_key FROM turns ORDER BY turn_no DESC LIMIT 1))`;
  // With controls, the claimed rows and one more, with a null id, that says what the controls did.
  const answer = withControls
    ? sql`SELECT claimed.*, NULL::boolean AS held_paused, NULL::integer AS held_retry_ms, NULL::boolean AS held_grouped, NULL::text AS held_after FROM claimed ${notified}
UNION ALL
SELECT NULL::bigint, ${params.queue}::text, NULL::jsonb, NULL::jsonb, NULL::integer, NULL::integer, NULL::smallint, NULL::integer, NULL::bigint, NULL::float8, NULL::float8,
       control.paused, ${retryAfter}, control.grouped, ${mode === "grouped" ? nextTurn : sql`NULL::text`}
  FROM control`
    : sql`SELECT claimed.* FROM claimed ${notified}`;
  // claim_room takes the queue's name from the row, so it runs only for a queue whose row holds a control.
  const control = withControls
    ? sql`control AS MATERIALIZED (
  SELECT room.*, q.grouped, q.max_running_per_group AS group_cap FROM ${sql.id(schema, "queues")} AS q CROSS JOIN LATERAL ${sql.id(schema, "claim_room")}(q.name, ${params.limit}::integer) AS room
   WHERE ${hasControls}),`
    : sql``;
  const turns =
    mode === "grouped"
      ? sql`turns AS MATERIALIZED (
  SELECT * FROM ${sql.id(schema, "claim_group_turns")}(${params.queue}::text, ${room}, ${after}::text, (SELECT group_cap FROM control))
           WITH ORDINALITY AS t(turn_key, turn_serial, take, turn_no)
),`
      : sql``;
  if (params.takeOverExpired === false && mode !== "grouped") {
    return sql<ClaimRow>`WITH ${control}
claimed AS (
  ${claim}
   WHERE ${picked}
  ${returning}
)
${answer}`;
  }
  const expired =
    params.takeOverExpired === false
      ? sql`expired AS (SELECT NULL::bigint AS id WHERE false),`
      : sql`expired AS MATERIALIZED (
  SELECT id, attempts, locked_by, started_at, locked_until FROM ${jobs}
   WHERE queue = ${params.queue} AND state = 'running' AND locked_until < now() AND attempts < max_attempts ${fitsDeadline} ${notExpired(jobs)}
   ORDER BY locked_until
   LIMIT greatest(${room} - (SELECT count(*) FROM due), 0)
   FOR UPDATE SKIP LOCKED
),
lease_lost AS (
  ${leaseLostInsert(schema, "expired", sql`'worker ' || ${params.workerId}::text`)}
),`;
  return sql<ClaimRow>`WITH ${control}
${turns}
due AS MATERIALIZED (
  ${due}
),
${expired}
claimed AS (
  ${claim}
   WHERE ${dueColumn === "ctid" ? sql`jobs.ctid = ANY(ARRAY(SELECT ctid FROM due))` : sql`jobs.id = ANY(ARRAY(SELECT id FROM due UNION ALL SELECT id FROM expired))`} ${commit}
  ${returning}
)
${answer}`;
}

/** How soon a grouped claim that found every group held by other claims asks again, in ms. */
const GROUPS_BUSY_RETRY_MS = 5;

/**
 * Whether a group of the queue has a job that a turn could start: a due job
 * of a group (or of the queue's `''` turn), or the due head of a line that
 * no dead job holds. Caps and running jobs aside: the claims that hold the
 * groups may leave room. A line whose head waits for a retry has none, nor
 * does a held line: they wait for time or an operator, not for a claim.
 */
function startableGroup(schema: string, params: ClaimBatchParams): RawBuilder<unknown> {
  const jobs = jobsTable(schema);
  return sql`EXISTS (SELECT FROM ${sql.id(schema, "job_groups")} AS g
   WHERE g.queue = ${params.queue} AND g.held_by IS NULL
     AND CASE WHEN g.serial
              THEN (SELECT line.run_at <= now() FROM ${jobs} AS line
                     WHERE line.queue = g.queue AND line.group_key = g.group_key AND line.serial IS NOT NULL AND line.state IN ('queued', 'failed')
                     ORDER BY line.id LIMIT 1)
              ELSE EXISTS (SELECT FROM ${jobs} AS j
                            WHERE j.queue = g.queue AND j.group_key = g.group_key AND j.state IN ('queued', 'failed') AND j.run_at <= now())
         END)`;
}

/**
 * The due jobs of the turns `claim_group_turns` gave this claim: from a
 * group, its `take` first jobs in the claim index's order; from a serial
 * line, its head (lowest id among its waiting jobs) when that is due.
 * A line whose head waits for a retry stays held: nothing behind it runs.
 *
 * The head is read with the statement's snapshot, taken before
 * `claim_group_turns` counted the line's running jobs on a fresh one: a
 * head that was running then is not among the waiting jobs, and if its
 * attempt failed meanwhile (back to wait for its retry), the job behind it
 * would pass for the head. So a line with a job running in that snapshot
 * gives nothing this time; the next claim reads it afresh.
 */
function dueByTurns(
  schema: string,
  params: ClaimBatchParams,
  room: RawBuilder<unknown>,
  filters: RawBuilder<unknown>,
  column: "id" | "ctid",
): RawBuilder<unknown> {
  const jobs = jobsTable(schema);
  // The turns are read in turn order and the picks stop at the claim's room: when claim_group_turns hands one job to
  // each of many groups, one with nothing due is passed over here, and the groups after the room is full are not read.
  const picked = sql.raw(column);
  return sql`(SELECT picked.${picked}, turns.turn_no FROM turns CROSS JOIN LATERAL (
    SELECT j.${picked} FROM ${jobs} AS j
     WHERE j.queue = ${params.queue} AND j.group_key = turns.turn_key AND j.state IN ('queued', 'failed') AND j.run_at <= now() ${filters}
     ORDER BY j.priority DESC, j.run_at, j.id
     LIMIT turns.take
       FOR UPDATE SKIP LOCKED) AS picked
   WHERE NOT turns.turn_serial AND turns.take > 0
  UNION ALL
  SELECT head.${picked}, turns.turn_no FROM turns CROSS JOIN LATERAL (
    SELECT j.${picked} FROM ${jobs} AS j
     WHERE j.id = (SELECT line.id FROM ${jobs} AS line
                    WHERE line.queue = ${params.queue} AND line.group_key = turns.turn_key AND line.serial IS NOT NULL AND line.state IN ('queued', 'failed')
                    ORDER BY line.id LIMIT 1)
       AND j.run_at <= now() ${filters}
       AND NOT EXISTS (SELECT FROM ${jobs} AS running
                        WHERE running.queue = ${params.queue} AND running.group_key = turns.turn_key AND running.group_key <> ''
                          AND running.state = 'running')
       FOR UPDATE SKIP LOCKED) AS head
   WHERE turns.turn_serial AND turns.take > 0)
  LIMIT ${room}`;
}

/** A claimed job's row, or the one row that says what the queue's controls did (id null; `held_*` null in claimed rows). */
type ClaimRow = ClaimedRow & {
  readonly held_paused: boolean | null;
  readonly held_retry_ms: number | null;
  readonly held_grouped?: boolean | null;
  /** In a grouped claim: the last group it took, where the next one starts. */
  readonly held_after?: string | null;
};
