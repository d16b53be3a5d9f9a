import { ScheduleConflictError } from "../../errors/schedule-errors";
import { scheduleFireJob } from "../../schedule/schedule-fire-job";
import { isScheduleLive } from "../../schedule/schedule-grace";
import type {
  FireDueSchedulesParams,
  FirstRunAt,
  ScheduleFire,
  ScheduleOrigin,
  SchedulePlan,
  ScheduleRecord,
  ScheduleSpec,
  SyncSchedulesParams,
  SyncSchedulesResult,
  UpsertScheduleParams,
  UpsertScheduleResult,
} from "../../store/schedule-store";
import { enqueueBatch } from "./memory-enqueue";
import type { MemoryState } from "./memory-state";

/** One schedule as the in-memory store keeps it: the columns of `schedules`, times as milliseconds since the epoch. */
export interface MemoryScheduleRow {
  spec: ScheduleSpec;
  readonly origin: ScheduleOrigin;
  declaredAt: number;
  nextRunAt: number;
  lastFiredAt: number | null;
  updatedAt: number;
}

/** The fields of a definition; a declaration that changes none of them leaves `updatedAt` as it was. */
const SPEC_FIELDS: readonly (keyof ScheduleSpec)[] = ["queue", "cron", "timeZone", "payloadJson", "catchUp", "enabled", "priority", "maxAttempts", "timeoutMs"];

/** Declares the code's schedules: see `ScheduleStore.syncSchedules`. */
export function syncSchedules(state: MemoryState, params: SyncSchedulesParams): SyncSchedulesResult {
  const conflicts: string[] = [];
  for (const spec of params.schedules) {
    if (state.schedules.get(spec.name)?.origin === "runtime") conflicts.push(spec.name);
    else write(state, spec, "code", params.firstRunAt);
  }
  return Object.freeze({ conflicts: Object.freeze(conflicts) });
}

/** Creates or changes a runtime schedule: see `ScheduleStore.upsertSchedule`. */
export function upsertSchedule(state: MemoryState, params: UpsertScheduleParams): UpsertScheduleResult {
  const held = state.schedules.get(params.schedule.name);
  if (held?.origin === "code") throw new ScheduleConflictError(params.schedule.name, "code");
  const row = write(state, params.schedule, "runtime", params.firstRunAt);
  return Object.freeze({ schedule: toScheduleRecord(row), created: held === undefined });
}

/** Deletes a schedule of any origin; the deleted one, or `undefined`. */
export function removeSchedule(state: MemoryState, name: string): ScheduleRecord | undefined {
  const row = state.schedules.get(name);
  state.schedules.delete(name);
  return row === undefined ? undefined : toScheduleRecord(row);
}

/** Every schedule, by name in byte order. */
export function listSchedules(state: MemoryState): readonly ScheduleRecord[] {
  const rows = [...state.schedules.values()].sort((a, b) => (a.spec.name < b.spec.name ? -1 : a.spec.name > b.spec.name ? 1 : 0));
  return Object.freeze(rows.map(toScheduleRecord));
}

/**
 * Fires the due live schedules, oldest `next_run_at` first, at most
 * `limit`: every plan is made before anything is written (a plan that
 * throws fails the call with nothing enqueued), then the fires are
 * enqueued with their dedupe keys and the schedules advanced.
 */
export async function fireDueSchedules(state: MemoryState, params: FireDueSchedulesParams): Promise<readonly ScheduleFire[]> {
  const now = state.now();
  const due = [...state.schedules.values()]
    .filter(
      (row) => row.spec.enabled && row.nextRunAt <= now && isScheduleLive({ origin: row.origin, declaredAt: new Date(row.declaredAt) }, now, params.graceMs),
    )
    .sort((a, b) => a.nextRunAt - b.nextRunAt)
    .slice(0, params.limit);
  const planned = due.map((row): { row: MemoryScheduleRow; plan: SchedulePlan } => ({ row, plan: params.plan(toScheduleRecord(row), new Date(now)) }));
  const jobs = planned.flatMap(({ row, plan }) => plan.fires.map((fireAt) => scheduleFireJob(row.spec, fireAt)));
  const results = await enqueueBatch(state, jobs, undefined);
  let index = 0;
  const fires: ScheduleFire[] = [];
  for (const { row, plan } of planned) {
    for (const fireAt of plan.fires) {
      const result = results[index++]!;
      fires.push(Object.freeze({ schedule: row.spec.name, fireAt, jobId: result.id, duplicate: result.duplicate }));
      row.lastFiredAt = Math.max(row.lastFiredAt ?? fireAt.getTime(), fireAt.getTime());
    }
    row.nextRunAt = plan.nextRunAt.getTime();
    row.updatedAt = now;
  }
  return Object.freeze(fires);
}

/** Inserts or updates a schedule of `origin` (a stored one has it already), stamped declared now; the next run is kept unless the cron or time zone changed. */
function write(state: MemoryState, spec: ScheduleSpec, origin: ScheduleOrigin, firstRunAt: FirstRunAt): MemoryScheduleRow {
  const now = state.now();
  const stored = state.schedules.get(spec.name);
  const sameTimes = stored?.spec.cron === spec.cron && stored.spec.timeZone === spec.timeZone;
  const nextRunAt = sameTimes ? stored.nextRunAt : firstRunAt(spec, new Date(now)).getTime();
  if (stored === undefined) {
    const row: MemoryScheduleRow = { spec: Object.freeze({ ...spec }), origin, declaredAt: now, nextRunAt, lastFiredAt: null, updatedAt: now };
    state.schedules.set(spec.name, row);
    return row;
  }
  // Changed in place, so a tick that holds the row while it enqueues advances the row the store keeps.
  if (SPEC_FIELDS.some((field) => stored.spec[field] !== spec[field])) stored.updatedAt = now;
  stored.spec = Object.freeze({ ...spec });
  stored.declaredAt = now;
  stored.nextRunAt = nextRunAt;
  return stored;
}

function toScheduleRecord(row: MemoryScheduleRow): ScheduleRecord {
  return Object.freeze({
    ...row.spec,
    origin: row.origin,
    declaredAt: new Date(row.declaredAt),
    nextRunAt: new Date(row.nextRunAt),
    lastFiredAt: row.lastFiredAt === null ? null : new Date(row.lastFiredAt),
    updatedAt: new Date(row.updatedAt),
  });
}
