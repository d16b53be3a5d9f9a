import { ConfigError } from "../errors/config-errors";
import { MAX_SCHEDULES_PER_FIRE } from "../limits";
import { checkScheduleGrace } from "../schedule/schedule-grace";
import { assertScheduleName } from "../validation/names";
import { integerOption, isArray } from "../validation/option-checks";
import { checkScheduleSpec } from "./check-new-job";
import { payloadCeiling, type CheckedJobStoreOptions } from "./checked-job-store";
import type {
  FireDueSchedulesParams,
  FirstRunAt,
  RemoveScheduleParams,
  ScheduleFire,
  SchedulePlan,
  ScheduleRecord,
  ScheduleStore,
  SyncSchedulesParams,
  SyncSchedulesResult,
  UpsertScheduleParams,
  UpsertScheduleResult,
} from "./schedule-store";

/**
 * A `ScheduleStore` that checks every argument before handing it to the
 * store it wraps, as `CheckedJobStore` does for jobs: each schedule's
 * name and queue (`InvalidNameError`), payload (`PayloadError`, within
 * `maxPayloadBytes`) and job settings (`ConfigError`), names given twice,
 * the callbacks, limits and grace of the calls — and what the callbacks
 * answer: a `firstRunAt` that is not a valid Date, or a `plan` whose next
 * run is not after the store's now, fails the call before anything is
 * written. A refused call rejects before the store sees it.
 *
 * @example
 * ```ts
 * container.registerInstance(SCHEDULE_STORE, new CheckedScheduleStore(new MyScheduleStore()));
 * ```
 */
export class CheckedScheduleStore implements ScheduleStore {
  readonly #store: ScheduleStore;
  readonly #maxPayloadBytes: number;

  /** Checks `options` like `CheckedJobStore`; wraps `store`, which it never calls here. */
  constructor(store: ScheduleStore, options: CheckedJobStoreOptions = {}) {
    if (typeof store !== "object" || store === null) throw new ConfigError("store", "must be a ScheduleStore");
    this.#store = store;
    this.#maxPayloadBytes = payloadCeiling(options);
  }

  syncSchedules(params: SyncSchedulesParams): Promise<SyncSchedulesResult> {
    try {
      checkSchedules(params, this.#maxPayloadBytes);
    } catch (refusal) {
      return Promise.reject(refusal);
    }
    return this.#store.syncSchedules({ schedules: params.schedules, firstRunAt: checkedFirstRunAt(params.firstRunAt) });
  }

  upsertSchedule(params: UpsertScheduleParams): Promise<UpsertScheduleResult> {
    try {
      if (typeof params !== "object" || params === null) throw new ConfigError("params", "must be { schedule, firstRunAt }");
      checkScheduleSpec(params.schedule, this.#maxPayloadBytes);
      checkFirstRunAtFunction(params.firstRunAt);
    } catch (refusal) {
      return Promise.reject(refusal);
    }
    return this.#store.upsertSchedule({ schedule: params.schedule, firstRunAt: checkedFirstRunAt(params.firstRunAt) });
  }

  removeSchedule(params: RemoveScheduleParams): Promise<ScheduleRecord | undefined> {
    try {
      assertScheduleName(params?.name);
    } catch (refusal) {
      return Promise.reject(refusal);
    }
    return this.#store.removeSchedule({ name: params.name });
  }

  listSchedules(): Promise<readonly ScheduleRecord[]> {
    return this.#store.listSchedules();
  }

  fireDueSchedules(params: FireDueSchedulesParams): Promise<readonly ScheduleFire[]> {
    try {
      integerOption("limit", params.limit, 1, MAX_SCHEDULES_PER_FIRE);
      checkScheduleGrace("graceMs", params.graceMs);
      if (typeof params.plan !== "function") throw new ConfigError("plan", "must be a function");
    } catch (refusal) {
      return Promise.reject(refusal);
    }
    const { plan } = params;
    return this.#store.fireDueSchedules({ limit: params.limit, graceMs: params.graceMs, plan: (record, now) => checkedPlan(plan(record, now), record, now) });
  }
}

/**
 * `store` behind a {@link CheckedScheduleStore}, unless it is one already.
 *
 * @example
 * ```ts
 * const schedules = checkedScheduleStore(container.resolve(SCHEDULE_STORE));
 * ```
 */
export function checkedScheduleStore(store: ScheduleStore, options?: CheckedJobStoreOptions): CheckedScheduleStore {
  return store instanceof CheckedScheduleStore ? store : new CheckedScheduleStore(store, options);
}

function checkSchedules(params: SyncSchedulesParams, maxPayloadBytes: number): void {
  if (!isArray(params.schedules)) throw new ConfigError("schedules", "must be an array of ScheduleSpec objects (see defineSchedule)");
  checkFirstRunAtFunction(params.firstRunAt);
  const names = new Set<string>();
  for (const spec of params.schedules) {
    checkScheduleSpec(spec, maxPayloadBytes);
    if (names.has(spec.name)) throw new ConfigError("schedules", `name ${JSON.stringify(spec.name)} is given twice; schedule names must be unique`);
    names.add(spec.name);
  }
}

function checkFirstRunAtFunction(firstRunAt: unknown): void {
  if (typeof firstRunAt !== "function") throw new ConfigError("firstRunAt", "must be a function");
}

/** `firstRunAt`, refusing an answer that is not a valid Date. */
function checkedFirstRunAt(firstRunAt: FirstRunAt): FirstRunAt {
  return (spec, now) => {
    const value: unknown = firstRunAt(spec, now);
    if (!isValidDate(value)) throw new ConfigError("firstRunAt", `must return a valid Date, got ${String(value)} for schedule ${JSON.stringify(spec.name)}`);
    return value;
  };
}

/** A plan with valid Dates whose next run is after the store's `now`; anything else fails the tick before it writes. */
function checkedPlan(plan: SchedulePlan, record: ScheduleRecord, now: Date): SchedulePlan {
  const where = `plan(${JSON.stringify(record.name)})`;
  if (typeof plan !== "object" || plan === null || !isArray(plan.fires)) {
    throw new ConfigError(where, "must return { fires: Date[], nextRunAt: Date }");
  }
  if (!plan.fires.every(isValidDate)) throw new ConfigError(`${where}.fires`, "must hold valid Dates only");
  if (!isValidDate(plan.nextRunAt) || plan.nextRunAt <= now) {
    throw new ConfigError(`${where}.nextRunAt`, `must be a valid Date after the database's now (${now.toISOString()}), got ${String(plan.nextRunAt)}`);
  }
  return plan;
}

function isValidDate(value: unknown): value is Date {
  return value instanceof Date && !Number.isNaN(value.getTime());
}
