import { InfrastructureError, type EnqueueResult } from "@stint/core";
import type { NewJob } from "@stint/core/driver";
import { sql, type RawBuilder } from "kysely";
import type { Statements } from "../connection/statement";
import { DEDUPE_CONFLICT_TARGET, isActive, MAX_DEDUPE_TRIES } from "./active-states";
import { jobsTable, millisecondsInterval } from "./job-row";
import { CompiledStatements, valueSlot } from "./compiled-statement";
import { joinNotifying } from "./notify-job-events";
import { enqueueInWindowStatement } from "./enqueue-in-window";

/**
 * Inserts one job, or finds the active job of the queue that holds its
 * dedupe key (or the first job of its open unique window). `run_at` and
 * `start_by` are computed on the database clock. A job without a dedupe
 * key, unique window or deadline is a plain insert (and the listeners'
 * notice): it cannot be a duplicate, and the statement is on the path from
 * enqueue to handler start; a deadline adds one column to it.
 *
 * With "replace", a queued holder takes the job's fields, and a holder that
 * has started (running, or failed and waiting for its retry) gives its key
 * up: the statement clears the holder's `dedupe_key` and inserts the job
 * as its follow-up, which later enqueues of the key replace while it
 * waits. Concurrent enqueues of one key take turns on the holder's row
 * lock and the unique index; the last to commit wins.
 *
 * Under READ COMMITTED the insert may wait for another transaction that
 * inserts the same key and then skip its row, while the lookup's snapshot
 * (taken before the wait) cannot see that job yet; and a replace may find
 * that its queued holder started meanwhile. The statement then returns
 * nothing and runs again, at most `MAX_DEDUPE_TRIES` times.
 *
 * @example
 * ```ts
 * const { id, duplicate } = await enqueue(runner, "stint", job);
 * ```
 */
export async function enqueue(statements: Statements, schema: string, job: NewJob): Promise<EnqueueResult> {
  const variant = variantOf(job);
  const deadline = hasDeadline(job);
  const grouped = hasGroup(job);
  const key = `${schema}:${variant}:${deadline}:${grouped}`;
  const build = (): RawBuilder<EnqueueRow> => {
    const slots = { ...SLOTS, ...(deadline ? DEADLINE_SLOTS : {}), ...(grouped ? GROUP_SLOTS : {}) };
    if (variant === "unique") return enqueueInWindowStatement(schema, slots);
    return enqueueStatement(schema, {
      ...slots,
      dedupeKey: variant === "plain" ? null : SLOTS.dedupeKey,
      onDuplicate: variant === "replace" ? "replace" : "keep",
    });
  };
  const values = {
    ...job,
    ...(job.unique ? { uniqueKey: job.unique.key, uniqueForMs: job.unique.forMs } : {}),
    startBy: job.startBy ?? null,
    expireInMs: job.expireInMs ?? null,
    groupKey: job.groupKey ?? null,
    serial: job.serial ?? null,
  };
  for (let tries = 0; tries < MAX_DEDUPE_TRIES; tries += 1) {
    const { rows } = await statements.run<EnqueueRow>(ENQUEUES.statement(key, build, values));
    const row = rows[0];
    if (row !== undefined) return Object.freeze({ id: String(row.id), duplicate: row.duplicate, ...(row.replaced ? { replaced: true } : {}) });
  }
  const held = job.unique ? `unique key ${JSON.stringify(job.unique.key)}` : `dedupe key ${JSON.stringify(job.dedupeKey)}`;
  throw new InfrastructureError(`enqueue gave up after ${MAX_DEDUPE_TRIES} tries: the ${held} of queue "${job.queue}" kept changing hands`);
}

/** Which statement enqueues `job`. */
function variantOf(job: NewJob): "plain" | "keep" | "replace" | "unique" {
  if (job.unique !== undefined && job.unique !== null) return "unique";
  if (job.dedupeKey === null) return "plain";
  return job.onDuplicate === "replace" ? "replace" : "keep";
}

/** Whether `job` has a start-by deadline (either way of giving one). */
function hasDeadline(job: NewJob): boolean {
  return (job.startBy !== undefined && job.startBy !== null) || (job.expireInMs !== undefined && job.expireInMs !== null);
}

/** Whether `job` has a group or a serial key. */
export function hasGroup(job: NewJob): boolean {
  return job.groupKey !== undefined && job.groupKey !== null;
}

/** What the enqueue statement answers. */
export interface EnqueueRow {
  readonly id: string;
  readonly duplicate: boolean;
  readonly replaced?: boolean;
}

/** The enqueue statements, compiled once per schema and variant. */
const ENQUEUES = new CompiledStatements();

/** The values an enqueue statement is compiled with; each call fills them in from its `NewJob`. */
const SLOTS: NewJob = {
  queue: valueSlot("queue"),
  payloadJson: valueSlot("payloadJson"),
  priority: valueSlot("priority"),
  maxAttempts: valueSlot("maxAttempts"),
  timeoutMs: valueSlot("timeoutMs"),
  runAt: valueSlot("runAt"),
  delayMs: valueSlot("delayMs"),
  dedupeKey: valueSlot("dedupeKey"),
  metaJson: valueSlot("metaJson"),
  unique: { key: valueSlot("uniqueKey"), forMs: valueSlot("uniqueForMs") },
};

/** The slots of a deadline, in the variants of jobs that have one. */
const DEADLINE_SLOTS: Pick<NewJob, "startBy" | "expireInMs"> = { startBy: valueSlot("startBy"), expireInMs: valueSlot("expireInMs") };

/** The slots of a group or serial key, in the variants of jobs that have one. */
const GROUP_SLOTS: Pick<NewJob, "groupKey" | "serial"> = { groupKey: valueSlot("groupKey"), serial: valueSlot("serial") };

/**
 * `INSERT INTO jobs (…) VALUES (…)` of one job, or with `select` `INSERT …
 * SELECT <id>, … <from>` (a `FROM`/`WHERE` tail that says when, and after
 * what, the row is inserted); `start_by` only for a job with a deadline
 * (`startBy`, or `expireInMs` after `run_at`), and `group_key` and
 * `serial` only for a job with a group or serial key, so the plain insert
 * stays what it was.
 */
export function insertStatement(
  schema: string,
  job: NewJob,
  select?: { readonly id: RawBuilder<unknown>; readonly from: RawBuilder<unknown>; readonly follows?: RawBuilder<unknown> },
): RawBuilder<unknown> {
  const id = select?.id;
  const runAt = sql`COALESCE(${job.runAt}::timestamptz, now()) + ${millisecondsInterval(job.delayMs)}`;
  const deadline = job.startBy !== undefined && job.startBy !== null;
  const grouped = hasGroup(job);
  const columns = sql.raw(
    `${id === undefined ? "" : "id, "}queue, payload, priority, max_attempts, timeout_ms, run_at, dedupe_key, meta${deadline ? ", start_by" : ""}${grouped ? ", group_key, serial" : ""}${select?.follows === undefined ? "" : ", follows"}`,
  );
  const group = grouped ? sql`, ${job.groupKey}::text, ${job.serial ?? null}::text` : sql``;
  const follows = select?.follows === undefined ? sql`` : sql`, ${select.follows}`;
  const startBy = deadline ? sql`, COALESCE(${job.startBy}::timestamptz, ${runAt} + ${millisecondsInterval(job.expireInMs as number)})` : sql``;
  return sql`INSERT INTO ${jobsTable(schema)} AS jobs (${columns})
  ${id === undefined ? sql`VALUES (` : sql`SELECT ${id}, `}${job.queue}, ${job.payloadJson}::jsonb, ${job.priority}::smallint, ${job.maxAttempts}::integer,
          ${job.timeoutMs}::integer, ${runAt},
          ${job.dedupeKey ?? sql`NULL`}::text, ${job.metaJson ?? null}::jsonb${startBy}${group}${follows}${
            select === undefined
              ? sql`)`
              : sql`
  ${select.from}`
          }`;
}

function enqueueStatement(schema: string, job: NewJob): RawBuilder<EnqueueRow> {
  const jobs = jobsTable(schema);
  const insert = insertStatement(schema, job);
  const startBy = job.startBy !== undefined && job.startBy !== null ? sql`, start_by = excluded.start_by` : sql`, start_by = NULL`;
  // Listeners hear of an inserted job (not of a dedupe hit, nor of a replaced holder).
  const notified = (source: string, inserted: RawBuilder<unknown>): RawBuilder<unknown> =>
    joinNotifying(schema, sql.id(source), { kind: sql`CASE WHEN ${inserted} THEN 'enqueued' END`, attempt: sql`0` });
  if (job.dedupeKey === null) {
    return sql<EnqueueRow>`WITH inserted AS (
  ${insert} RETURNING id, queue
)
SELECT inserted.id, false AS duplicate FROM inserted ${notified("inserted", sql`true`)}`;
  }
  if (job.onDuplicate === "replace") {
    // A holder that has started gives its key up first (the insert reads its id, so the update runs before it), and the
    // job becomes its follow-up (follows: the claim leaves it while the holder is active); a
    // queued holder takes this job's fields. `xmax` is set on a row this statement updated, 0 on one it inserted. When
    // neither happened (the queued holder started meanwhile), nothing is returned and the statement runs again.
    return sql<EnqueueRow>`WITH released AS (
  UPDATE ${jobs} SET dedupe_key = NULL, updated_at = now()
   WHERE queue = ${job.queue} AND dedupe_key = ${job.dedupeKey}::text AND state IN ('running', 'failed')
  RETURNING id
),
inserted AS (
  ${insertStatement(schema, job, {
    id: sql`nextval(${sql.lit(`"${schema}".jobs_id_seq`)}::regclass)`,
    from: sql`FROM (SELECT max(id) AS id FROM released) AS released_first`,
    follows: sql`released_first.id`,
  })}
  ON CONFLICT ${DEDUPE_CONFLICT_TARGET} DO UPDATE SET payload = excluded.payload, priority = excluded.priority, max_attempts = excluded.max_attempts,
        timeout_ms = excluded.timeout_ms, run_at = excluded.run_at, meta = excluded.meta${startBy}, updated_at = now()
     WHERE jobs.state = 'queued'
  RETURNING id, queue, xmax <> 0 AS replaced
)
SELECT inserted.id, inserted.replaced AS duplicate, inserted.replaced FROM inserted ${notified("inserted", sql`NOT inserted.replaced`)}`;
  }
  return sql<EnqueueRow>`WITH inserted AS (
  ${insert}
  ON CONFLICT ${DEDUPE_CONFLICT_TARGET} DO NOTHING
  RETURNING id, queue
)
SELECT inserted.id, false AS duplicate, false AS replaced FROM inserted ${notified("inserted", sql`true`)}
UNION ALL
SELECT id, true AS duplicate, false AS replaced FROM ${jobs}
 WHERE queue = ${job.queue} AND dedupe_key = ${job.dedupeKey}::text AND ${isActive()}
   AND NOT EXISTS (SELECT 1 FROM inserted)
LIMIT 1`;
}
