import type { QueueControls } from "@stint/core";
import { InvalidNameError } from "@stint/core";
import { assertQueueName, type QueueControlsChange } from "@stint/core/driver";
import { sql, type Kysely, type RawBuilder } from "kysely";
import { queuesTable } from "./job-row";
import { timestampValue } from "./timestamp-value";

interface ControlsRow {
  readonly name: string;
  readonly paused: boolean;
  readonly max_running: number | null;
  readonly max_running_per_group: number | null;
  readonly rate_limit: number | null;
  readonly rate_period_ms: number | null;
  readonly succeeded_days: number | null;
  readonly dead_days: number | null;
  readonly cancelled_days: number | null;
  readonly updated_at: Date | number;
}

const CONTROL_COLUMNS = sql`name, paused, max_running, max_running_per_group, rate_limit, rate_period_ms, succeeded_days, dead_days, cancelled_days, updated_at`;

/** The `queues` column of each field of a queue's retention. */
const RETENTION_COLUMNS = { succeededDays: "succeeded_days", deadDays: "dead_days", cancelledDays: "cancelled_days" } as const;

/**
 * Inserts or updates the controls of `queue`: only the fields `change`
 * names change (`null` removes a cap or a limit, or a retention of the
 * queue's own). A name that breaks the
 * naming rule (a queue written by SQL) only updates the row that holds it;
 * without one it is refused with `InvalidNameError`. A new or changed rate
 * limit starts with a full burst. The row's trigger wakes the queue's
 * workers.
 *
 * ### SQL
 * ```sql
 * INSERT INTO "stint"."queues" AS q (name, paused, max_running, max_running_per_group, rate_limit, rate_period_ms, succeeded_days, dead_days, cancelled_days)
 * VALUES ($1, coalesce($2, false), $3, $4, $5, $6, $7, $8, $9)
 * ON CONFLICT (name) DO UPDATE SET <the fields given>, updated_at = now()
 * RETURNING name, paused, max_running, max_running_per_group, rate_limit, rate_period_ms, succeeded_days, dead_days, cancelled_days, updated_at
 * ```
 *
 * @example
 * ```ts
 * await setQueueControls(db, "stint", "send-invoice", { paused: true });
 * ```
 */
export async function setQueueControls(db: Kysely<any>, schema: string, queue: string, change: QueueControlsChange): Promise<QueueControls> {
  const sets: RawBuilder<unknown>[] = [sql`updated_at = now()`];
  if (change.paused !== undefined) sets.push(sql`paused = ${change.paused}`);
  if (change.maxRunning !== undefined) sets.push(sql`max_running = ${change.maxRunning}::integer`);
  if (change.maxRunningPerGroup !== undefined) sets.push(sql`max_running_per_group = ${change.maxRunningPerGroup}::integer`);
  if (change.rateLimit !== undefined) {
    sets.push(sql`rate_limit = ${change.rateLimit?.limit ?? null}::integer, rate_period_ms = ${change.rateLimit?.periodMs ?? null}::integer`);
    sets.push(sql`rate_tokens = NULL, rate_refilled_at = NULL`);
  }
  const retention = change.retention ?? {};
  for (const field of Object.keys(RETENTION_COLUMNS) as (keyof typeof RETENTION_COLUMNS)[]) {
    const days = retention[field];
    if (days !== undefined) sets.push(sql`${sql.id(RETENTION_COLUMNS[field])} = ${days}::integer`);
  }
  if (!followsNamingRule(queue)) {
    // A name written by SQL that breaks the rule: its existing row changes, but no new row is made under it.
    const { rows: updated } = await sql<ControlsRow>`UPDATE ${queuesTable(schema)} AS q SET ${sql.join(sets)}
      WHERE name = ${queue} RETURNING ${CONTROL_COLUMNS}`.execute(db);
    if (updated[0] === undefined) assertQueueName(queue);
    return toQueueControls(updated[0]!);
  }
  const { rows } = await sql<ControlsRow>`INSERT INTO ${queuesTable(schema)} AS q
      (name, paused, max_running, max_running_per_group, rate_limit, rate_period_ms, succeeded_days, dead_days, cancelled_days)
    VALUES (${queue}, ${change.paused ?? false}, ${change.maxRunning ?? null}::integer, ${change.maxRunningPerGroup ?? null}::integer, ${change.rateLimit?.limit ?? null}::integer,
            ${change.rateLimit?.periodMs ?? null}::integer, ${retention.succeededDays ?? null}::integer, ${retention.deadDays ?? null}::integer,
            ${retention.cancelledDays ?? null}::integer)
    ON CONFLICT (name) DO UPDATE SET ${sql.join(sets)}
    RETURNING ${CONTROL_COLUMNS}`.execute(db);
  return toQueueControls(rows[0]!);
}

function followsNamingRule(queue: string): boolean {
  try {
    assertQueueName(queue);
    return true;
  } catch (error) {
    if (error instanceof InvalidNameError) return false;
    throw error;
  }
}

/** Every queue's controls, by name. */
export async function listQueueControls(db: Kysely<any>, schema: string): Promise<readonly QueueControls[]> {
  const { rows } = await sql<ControlsRow>`SELECT ${CONTROL_COLUMNS} FROM ${queuesTable(schema)} ORDER BY name`.execute(db);
  return Object.freeze(rows.map(toQueueControls));
}

function toQueueControls(row: ControlsRow): QueueControls {
  return Object.freeze({
    queue: row.name,
    paused: row.paused,
    maxRunning: row.max_running,
    maxRunningPerGroup: row.max_running_per_group,
    rateLimit: row.rate_limit === null || row.rate_period_ms === null ? null : Object.freeze({ limit: row.rate_limit, periodMs: row.rate_period_ms }),
    retention: Object.freeze({ succeededDays: row.succeeded_days, deadDays: row.dead_days, cancelledDays: row.cancelled_days }),
    updatedAt: timestampValue(row.updated_at),
  });
}
