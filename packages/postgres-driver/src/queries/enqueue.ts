import { InfrastructureError, type EnqueueResult } from "@stint/core";
import type { NewJob } from "@stint/core/driver";
import { sql, type RawBuilder } from "kysely";
import type { Statements } from "../connection/statement";
import { DEDUPE_CONFLICT_TARGET, isActive, MAX_DEDUPE_TRIES } from "./active-states";
import { jobsTable, millisecondsInterval } from "./job-row";
import { CompiledStatements, valueSlot } from "./compiled-statement";
import { joinNotifying } from "./notify-job-events";

/**
 * Inserts one job, or finds the active job of the queue that holds its
 * dedupe key. `run_at` is computed on the database clock. A job without a
 * dedupe key is a plain insert (and the listeners' notice): it cannot be a duplicate,
 * and the statement is on the path from enqueue to handler start.
 *
 * With "replace", a holder that is running or waiting for a retry is left
 * alone (the update's WHERE is false, so nothing is returned and the
 * lookup finds it). Concurrent enqueues of one key take turns on the
 * unique index; the last to commit wins.
 *
 * Under READ COMMITTED the insert may wait for another transaction that
 * inserts the same key and then skip its row, while the lookup's snapshot
 * (taken before the wait) cannot see that job yet: the statement then
 * returns nothing and runs again, at most `MAX_DEDUPE_TRIES` times.
 *
 * @example
 * ```ts
 * const { id, duplicate } = await enqueue(runner, "stint", job);
 * ```
 */
export async function enqueue(statements: Statements, schema: string, job: NewJob): Promise<EnqueueResult> {
  const variant = job.dedupeKey === null ? "plain" : job.onDuplicate === "replace" ? "replace" : "keep";
  const build = (): RawBuilder<EnqueueRow> =>
    enqueueStatement(schema, { ...SLOTS, dedupeKey: variant === "plain" ? null : SLOTS.dedupeKey, onDuplicate: variant === "replace" ? "replace" : "keep" });
  for (let tries = 0; tries < MAX_DEDUPE_TRIES; tries += 1) {
    const { rows } = await statements.run<EnqueueRow>(ENQUEUES.statement(`${schema}:${variant}`, build, job));
    const row = rows[0];
    if (row !== undefined) return Object.freeze({ id: String(row.id), duplicate: row.duplicate, ...(row.replaced ? { replaced: true } : {}) });
  }
  throw new InfrastructureError(
    `enqueue gave up after ${MAX_DEDUPE_TRIES} tries: the dedupe key ${JSON.stringify(job.dedupeKey)} of queue "${job.queue}" kept changing hands`,
  );
}

/** What the enqueue statement answers. */
interface EnqueueRow {
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
};

function enqueueStatement(schema: string, job: NewJob): RawBuilder<EnqueueRow> {
  const jobs = jobsTable(schema);
  const insert = sql`INSERT INTO ${jobs} AS jobs (queue, payload, priority, max_attempts, timeout_ms, run_at, dedupe_key, meta)
  VALUES (${job.queue}, ${job.payloadJson}::jsonb, ${job.priority}::smallint, ${job.maxAttempts}::integer,
          ${job.timeoutMs}::integer, COALESCE(${job.runAt}::timestamptz, now()) + ${millisecondsInterval(job.delayMs)},
          ${job.dedupeKey ?? sql`NULL`}::text, ${job.metaJson ?? null}::jsonb)`;
  // Listeners hear of an inserted job (not of a dedupe hit, nor of a replaced holder).
  const notified = (source: string, inserted: RawBuilder<unknown>): RawBuilder<unknown> =>
    joinNotifying(schema, sql.id(source), { kind: sql`CASE WHEN ${inserted} THEN 'enqueued' END`, attempt: sql`0` });
  if (job.dedupeKey === null) {
    return sql<EnqueueRow>`WITH inserted AS (
  ${insert} RETURNING id, queue
)
SELECT inserted.id, false AS duplicate FROM inserted ${notified("inserted", sql`true`)}`;
  }
  // replace: a queued holder of the key takes this job's fields; `xmax` is set on a row this statement updated, 0 on one it inserted.
  const onConflict =
    job.onDuplicate === "replace"
      ? sql`DO UPDATE SET payload = excluded.payload, priority = excluded.priority, max_attempts = excluded.max_attempts,
        timeout_ms = excluded.timeout_ms, run_at = excluded.run_at, meta = excluded.meta, updated_at = now()
     WHERE jobs.state = 'queued'
  RETURNING id, queue, xmax <> 0 AS replaced`
      : sql`DO NOTHING
  RETURNING id, queue, false AS replaced`;
  return sql<EnqueueRow>`WITH inserted AS (
  ${insert}
  ON CONFLICT ${DEDUPE_CONFLICT_TARGET} ${onConflict}
)
SELECT inserted.id, inserted.replaced AS duplicate, inserted.replaced FROM inserted ${notified("inserted", sql`NOT inserted.replaced`)}
UNION ALL
SELECT id, true AS duplicate, false AS replaced FROM ${jobs}
 WHERE queue = ${job.queue} AND dedupe_key = ${job.dedupeKey}::text AND ${isActive()}
   AND NOT EXISTS (SELECT 1 FROM inserted)
LIMIT 1`;
}
