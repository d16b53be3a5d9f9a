import { ConfigError } from "../errors/config-errors";
import { MAX_SCHEDULES_PER_FIRE } from "../limits";
import { integerOption, isArray } from "../validation/option-checks";
import { checkScheduleSpec } from "./check-new-job";
import { payloadCeiling, type CheckedJobStoreOptions } from "./checked-job-store";
import type { FireDueSchedulesParams, ScheduleFire, ScheduleRecord, ScheduleStore, SyncSchedulesParams } from "./schedule-store";

/**
 * A `ScheduleStore` that checks every argument before handing it to the
 * store it wraps, as `CheckedJobStore` does for jobs: each schedule's
 * name and queue (`InvalidNameError`), payload (`PayloadError`, within
 * `maxPayloadBytes`) and job settings (`ConfigError`), names given twice,
 * and the callbacks and limits of the calls. A refused call rejects before
 * the store sees it.
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

  syncSchedules(params: SyncSchedulesParams): Promise<void> {
    try {
      checkSchedules(params, this.#maxPayloadBytes);
    } catch (refusal) {
      return Promise.reject(refusal);
    }
    return this.#store.syncSchedules(params);
  }

  listSchedules(): Promise<readonly ScheduleRecord[]> {
    return this.#store.listSchedules();
  }

  fireDueSchedules(params: FireDueSchedulesParams): Promise<readonly ScheduleFire[]> {
    try {
      integerOption("limit", params.limit, 1, MAX_SCHEDULES_PER_FIRE);
      if (typeof params.plan !== "function") throw new ConfigError("plan", "must be a function");
    } catch (refusal) {
      return Promise.reject(refusal);
    }
    return this.#store.fireDueSchedules(params);
  }
}

function checkSchedules(params: SyncSchedulesParams, maxPayloadBytes: number): void {
  if (!isArray(params.schedules)) throw new ConfigError("schedules", "must be an array of ScheduleSpec objects (see defineSchedule)");
  if (typeof params.firstRunAt !== "function") throw new ConfigError("firstRunAt", "must be a function");
  const names = new Set<string>();
  for (const spec of params.schedules) {
    checkScheduleSpec(spec, maxPayloadBytes);
    if (names.has(spec.name)) throw new ConfigError("schedules", `name ${JSON.stringify(spec.name)} is given twice; schedule names must be unique`);
    names.add(spec.name);
  }
}
