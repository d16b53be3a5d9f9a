import { InfrastructureError, type EnqueueResult } from "@stint/core";
import type { NewJob } from "@stint/core/driver";
import { sql, type RawBuilder } from "kysely";
import type { Statements } from "../connection/statement";
import { DEDUPE_CONFLICT_TARGET, isActive, MAX_DEDUPE_TRIES } from "./active-states";
import { CompiledStatements, valueSlot } from "./compiled-statement";
import { compileStatement } from "./named-statement";
import { jobsTable } from "./job-row";
import { hasGroup } from "./enqueue";
import { joinNotifying, notifyJobEvents } from "./notify-job-events";

interface BatchRow {
  /** 1-based position in the batch. */
  readonly ord: string;
  /** Position of the first item of the batch with the same queue and dedupe key (itself when none). */
  readonly first_ord: string;
  /** The id reserved for that first item. */
  readonly new_id: string;
  readonly inserted: boolean;
  /** The active job that already held the key, when the insert was skipped and it is visible. */
  readonly existing_id: string | null;
}

/**
 * Inserts many jobs with one statement (10 000 rows and more), returning one
 * result per input, in input order. Within a batch, a later item with the
 * queue and dedupe key of an earlier one is a duplicate of it.
 *
 * Ids are reserved with `nextval` for each first-of-its-key item before the
 * insert, so every result is matched to its input by id rather than by the
 * order of `RETURNING` rows. They are reserved in input order (PostgreSQL
 * evaluates a volatile output column after the `ORDER BY` sort), so jobs of
 * equal priority and `run_at` are claimed in the order they were given.
 *
 * Rows are inserted in (queue, dedupe key) order, so concurrent batches
 * with overlapping keys wait for each other in one order instead of
 * deadlocking.
 *
 * Items whose key was taken by a transaction that committed while this one
 * waited (invisible to this statement's snapshot) are run again, at most
 * `MAX_DEDUPE_TRIES` times in all.
 *
 * @example
 * ```ts
 * const results = await enqueueMany(runner, "stint", jobs); // results[i] belongs to jobs[i]
 * ```
 */
export async function enqueueMany(statements: Statements, schema: string, jobs: readonly NewJob[]): Promise<readonly EnqueueResult[]> {
  if (jobs.every((job) => job.dedupeKey === null)) return insertWithoutKeys(statements, schema, jobs);
  const results: (EnqueueResult | undefined)[] = new Array<EnqueueResult | undefined>(jobs.length).fill(undefined);
  let pending = jobs.map((_, index) => index);
  for (let tries = 0; tries < MAX_DEDUPE_TRIES && pending.length > 0; tries += 1) {
    const batch = pending.map((index) => jobs[index] as NewJob);
    const { rows } = await statements.run<BatchRow>(compileStatement(enqueueManyStatement(schema, batch)));
    const unresolved: number[] = [];
    for (const row of rows) {
      const index = pending[Number(row.ord) - 1] as number;
      if (row.inserted) {
        results[index] = Object.freeze({ id: String(row.new_id), duplicate: row.ord !== row.first_ord });
      } else if (row.existing_id !== null) {
        results[index] = Object.freeze({ id: String(row.existing_id), duplicate: true });
      } else {
        unresolved.push(index);
      }
    }
    pending = unresolved;
  }
  if (pending.length > 0) {
    const first = jobs[pending[0] as number] as NewJob;
    throw new InfrastructureError(
      `enqueueMany gave up after ${MAX_DEDUPE_TRIES} tries: the dedupe key ${JSON.stringify(first.dedupeKey)} of queue "${first.queue}" kept changing hands`,
    );
  }
  return Object.freeze(results as EnqueueResult[]);
}

function enqueueManyStatement(schema: string, jobs: readonly NewJob[]): RawBuilder<BatchRow> {
  const table = jobsTable(schema);
  const sequence = `"${schema}".jobs_id_seq`;
  return sql<BatchRow>`WITH input AS MATERIALIZED (
  SELECT i.*,
         CASE WHEN i.dedupe_key IS NULL THEN i.ord
              ELSE min(i.ord) OVER (PARTITION BY i.queue, i.dedupe_key) END AS first_ord
    FROM unnest(${jobs.map((job) => job.queue)}::text[],
                ${jobs.map((job) => job.payloadJson)}::text[],
                ${jobs.map((job) => job.priority)}::smallint[],
                ${jobs.map((job) => job.maxAttempts)}::integer[],
                ${jobs.map((job) => job.timeoutMs)}::integer[],
                ${jobs.map((job) => job.runAt)}::timestamptz[],
                ${jobs.map((job) => job.delayMs)}::double precision[],
                ${jobs.map((job) => job.dedupeKey)}::text[],
                ${jobs.map((job) => job.metaJson ?? null)}::text[],
                ${jobs.map((job) => job.startBy ?? null)}::timestamptz[],
                ${jobs.map((job) => job.expireInMs ?? null)}::double precision[],
                ${jobs.map((job) => job.groupKey ?? "")}::text[],
                ${jobs.map((job) => job.serial ?? null)}::text[])
         WITH ORDINALITY AS i(queue, payload, priority, max_attempts, timeout_ms, run_at, delay_ms, dedupe_key, meta, start_by, expire_in_ms, group_key, serial, ord)
),
fresh AS MATERIALIZED (
  SELECT nextval(${sequence}::regclass) AS id, input.* FROM input WHERE input.ord = input.first_ord ORDER BY input.ord
),
inserted AS (
  INSERT INTO ${table} (id, queue, payload, priority, max_attempts, timeout_ms, run_at, dedupe_key, meta, start_by, group_key, serial)
  SELECT id, queue, payload::jsonb, priority, max_attempts, timeout_ms,
         COALESCE(run_at, now()) + delay_ms * interval '1 millisecond', dedupe_key, meta::jsonb,
         COALESCE(start_by, COALESCE(run_at, now()) + (delay_ms + expire_in_ms) * interval '1 millisecond'), group_key, serial
    FROM fresh
   ORDER BY queue COLLATE "C", dedupe_key COLLATE "C", ord
  ON CONFLICT ${DEDUPE_CONFLICT_TARGET} DO NOTHING
  RETURNING id, queue
),
notified AS MATERIALIZED (
  SELECT ${notifyJobEvents(schema, sql`inserted`, { kind: sql`'enqueued'`, attempt: sql`0` })} AS notified
)
SELECT input.ord, input.first_ord, fresh.id AS new_id, inserted.id IS NOT NULL AS inserted, existing.id AS existing_id
  FROM input
  JOIN fresh ON fresh.ord = input.first_ord
  LEFT JOIN inserted ON inserted.id = fresh.id
  LEFT JOIN LATERAL (
    SELECT jobs.id FROM ${table} AS jobs
     WHERE inserted.id IS NULL AND fresh.dedupe_key IS NOT NULL
       AND jobs.queue = fresh.queue AND jobs.dedupe_key = fresh.dedupe_key AND ${isActive(sql.ref("jobs.state"))}
     LIMIT 1
  ) AS existing ON true
 CROSS JOIN notified
 ORDER BY input.ord`;
}

/** The insert of a batch without dedupe keys, compiled once per schema. */
const PLAIN_INSERTS = new CompiledStatements();

/**
 * A batch in which no job has a dedupe key can hold no duplicate: it is one
 * plain insert. The payloads travel as one JSON array (their JSON texts
 * joined, not serialized again) and the other columns as arrays, read
 * together with `ROWS FROM`; ids are drawn in input order (a volatile
 * output column is evaluated after the sort), so the returned ids, in
 * ascending order, belong to the inputs in order. It is much cheaper than
 * the statement that also handles keys (see docs/benchmarks.md, Figures
 * behind the code).
 *
 * ```sql
 * INSERT INTO "stint"."jobs" (id, queue, payload, …)
 * SELECT nextval(…), queue, payload, … FROM ROWS FROM (unnest($1::text[]), jsonb_array_elements($2::jsonb), …)
 *        WITH ORDINALITY AS i(queue, payload, …, ord)
 *  ORDER BY ord RETURNING id
 * ```
 */
async function insertWithoutKeys(statements: Statements, schema: string, jobs: readonly NewJob[]): Promise<readonly EnqueueResult[]> {
  const deadlines = jobs.some((job) => job.startBy != null || job.expireInMs != null);
  const groups = jobs.some(hasGroup);
  const statement = PLAIN_INSERTS.statement(`${schema}:${deadlines}:${groups}`, () => plainInsertStatement(schema, deadlines, groups), {
    queues: jobs.map((job) => job.queue),
    payloads: `[${jobs.map((job) => job.payloadJson).join(",")}]`,
    priorities: jobs.map((job) => job.priority),
    maxAttempts: jobs.map((job) => job.maxAttempts),
    timeouts: jobs.map((job) => job.timeoutMs),
    runAts: jobs.map((job) => job.runAt),
    delays: jobs.map((job) => job.delayMs),
    metas: jobs.map((job) => job.metaJson ?? null),
    ...(deadlines ? { startBys: jobs.map((job) => job.startBy ?? null), expireIns: jobs.map((job) => job.expireInMs ?? null) } : {}),
    ...(groups ? { groupKeys: jobs.map((job) => job.groupKey ?? ""), serials: jobs.map((job) => job.serial ?? null) } : {}),
  });
  const { rows } = await statements.run<{ readonly id: string }>(statement);
  if (rows.length !== jobs.length) throw new InfrastructureError(`enqueueMany inserted ${rows.length} of ${jobs.length} jobs`);
  const ids = rows.map((row) => String(row.id)).sort(byNumericValue);
  return Object.freeze(ids.map((id) => Object.freeze({ id, duplicate: false })));
}

function plainInsertStatement(schema: string, deadlines: boolean, groups: boolean): RawBuilder<{ readonly id: string }> {
  const sequence = `"${schema}".jobs_id_seq`;
  // Only a batch with deadlines (or groups) reads and writes them, so a batch without stays the statement it was.
  const none = [sql``, sql``, sql``, sql``];
  const deadline = deadlines
    ? [
        sql`, start_by`,
        sql`, COALESCE(i.start_by, COALESCE(i.run_at, now()) + (i.delay_ms + i.expire_in_ms) * interval '1 millisecond')`,
        sql`, unnest(${valueSlot("startBys")}::timestamptz[]), unnest(${valueSlot("expireIns")}::double precision[])`,
        sql`, start_by, expire_in_ms`,
      ]
    : none;
  const group = groups
    ? [
        sql`, group_key, serial`,
        sql`, i.group_key, i.serial`,
        sql`, unnest(${valueSlot("groupKeys")}::text[]), unnest(${valueSlot("serials")}::text[])`,
        sql`, group_key, serial`,
      ]
    : none;
  const [column, value, arrays, names] = deadline.map((part, index) => sql`${part}${group[index]}`);
  return sql<{ readonly id: string }>`WITH inserted AS (
INSERT INTO ${jobsTable(schema)} (id, queue, payload, priority, max_attempts, timeout_ms, run_at, meta${column})
SELECT nextval(${sql.lit(sequence)}::regclass), i.queue, i.payload, i.priority, i.max_attempts, i.timeout_ms,
       COALESCE(i.run_at, now()) + i.delay_ms * interval '1 millisecond', i.meta::jsonb${value}
  FROM ROWS FROM (unnest(${valueSlot("queues")}::text[]), jsonb_array_elements(${valueSlot("payloads")}::jsonb),
                  unnest(${valueSlot("priorities")}::smallint[]), unnest(${valueSlot("maxAttempts")}::integer[]),
                  unnest(${valueSlot("timeouts")}::integer[]), unnest(${valueSlot("runAts")}::timestamptz[]),
                  unnest(${valueSlot("delays")}::double precision[]), unnest(${valueSlot("metas")}::text[])${arrays})
       WITH ORDINALITY AS i(queue, payload, priority, max_attempts, timeout_ms, run_at, delay_ms, meta${names}, ord)
 ORDER BY i.ord
RETURNING id, queue
)
SELECT inserted.id FROM inserted
 ${joinNotifying(schema, sql`inserted`, { kind: sql`'enqueued'`, attempt: sql`0` })}`;
}

/** Orders decimal ids (bigint as text) by their value. */
function byNumericValue(a: string, b: string): number {
  return a.length - b.length || (a < b ? -1 : a > b ? 1 : 0);
}
