import type { ScheduleRecord } from "@stint/core";
import { scheduleFireJob, type FireDueSchedulesParams, type ScheduleFire, type SchedulePlan } from "@stint/core/driver";
import { sql, type Kysely } from "kysely";
import { KyselyStatements } from "../connection/kysely-statements";
import { enqueueMany } from "./enqueue-many";
import { SCHEDULE_COLUMNS, schedulesTable, toScheduleRecord, type ScheduleRow } from "./schedule-row";

interface PlannedSchedule {
  readonly record: ScheduleRecord;
  readonly plan: SchedulePlan;
}

/**
 * One tick of the schedules, in one transaction on one connection:
 *
 * 1. lock up to `limit` enabled schedules whose `next_run_at` has passed
 *    and that are live — created at run time, or declared by the code
 *    within the last `graceMs` — skipping those another process holds
 *    (`schedules_due_idx`);
 * 2. ask `plan` (plain JavaScript) which fires each one owes and when it
 *    fires next (`CheckedScheduleStore` holds `nextRunAt` after the
 *    database's `now()`);
 * 3. enqueue every fire with `enqueueMany`, dedupe key
 *    `schedule:<name>:<fire ISO time>`, `run_at` = the fire time;
 * 4. advance `next_run_at` (and `last_fired_at` to the latest fire), and commit.
 *
 * A process that reaches a row after another one committed sees its new
 * `next_run_at` (the lock rechecks the condition) and skips it, so any
 * number of processes ticking at once enqueue each fire once; the dedupe
 * key guards the rest (a fire whose job is still active comes back as a
 * duplicate). If `plan` throws, nothing is written. A `code` schedule no
 * process declared within the grace keeps its `next_run_at` and is not
 * locked; declared again, it fires what it owes as after downtime.
 *
 * @example
 * ```ts
 * const fires = await fireDueSchedules(db, "stint", { limit: 100, graceMs: 86_400_000, plan: (schedule, now) => planFires(schedule, now) });
 * ```
 */
export async function fireDueSchedules(db: Kysely<any>, schema: string, params: FireDueSchedulesParams): Promise<readonly ScheduleFire[]> {
  const schedules = schedulesTable(schema);
  return db.transaction().execute(async (trx) => {
    const { rows } = await sql<ScheduleRow & { db_now: Date }>`SELECT ${SCHEDULE_COLUMNS}, now() AS db_now
  FROM ${schedules}
 WHERE enabled AND next_run_at <= now()
   AND (origin = 'runtime' OR declared_at > now() - ${params.graceMs}::double precision * interval '1 millisecond')
 ORDER BY next_run_at
 LIMIT ${params.limit}::integer
 FOR UPDATE SKIP LOCKED`.execute(trx);
    if (rows.length === 0) return Object.freeze([]);
    const planned = rows.map((row): PlannedSchedule => {
      const record = toScheduleRecord(row);
      return { record, plan: params.plan(record, row.db_now) };
    });
    const jobs = planned.flatMap(({ record, plan }) => plan.fires.map((fireAt) => scheduleFireJob(record, fireAt)));
    const results = jobs.length === 0 ? [] : await enqueueMany(new KyselyStatements(trx), schema, jobs);
    await sql`UPDATE ${schedules} AS s
   SET next_run_at = fired.next_run_at, last_fired_at = coalesce(fired.last_fired_at, s.last_fired_at), updated_at = now()
  FROM unnest(${planned.map(({ record }) => record.name)}::text[],
              ${planned.map(({ plan }) => plan.nextRunAt)}::timestamptz[],
              ${planned.map(({ plan }) => latest(plan.fires))}::timestamptz[]) AS fired(name, next_run_at, last_fired_at)
 WHERE s.name = fired.name`.execute(trx);
    let index = 0;
    const fires = planned.flatMap(({ record, plan }) =>
      plan.fires.map((fireAt): ScheduleFire => {
        const result = results[index++];
        if (result === undefined) throw new Error(`enqueueMany returned no result for fire ${index} of ${jobs.length}`);
        return Object.freeze({ schedule: record.name, fireAt, jobId: result.id, duplicate: result.duplicate });
      }),
    );
    return Object.freeze(fires);
  });
}

function latest(fires: readonly Date[]): Date | null {
  return fires.reduce<Date | null>((max, fireAt) => (max === null || fireAt > max ? fireAt : max), null);
}
