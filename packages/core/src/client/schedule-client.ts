import { inject, injectable } from "tsyringe";
import { SCHEDULE_STORE } from "../di/tokens";
import { assertPayloadFitsSchema } from "../job/payload-schema";
import { firstRunAt } from "../schedule/cron-plan";
import { defineSchedule, type ScheduleOptions } from "../schedule/define-schedule";
import { checkedScheduleStore } from "../store/checked-schedule-store";
import type { ScheduleRecord, ScheduleStore, UpsertScheduleResult } from "../store/schedule-store";

/**
 * Schedules created while the application runs — one per tenant, per
 * report a user subscribed to — next to those its code declares
 * (`defineSchedule`). A runtime schedule fires like a declared one, once
 * per fire however many processes tick, and is kept until it is removed:
 * it never expires for want of a declaration. Its name must not be one the
 * code declares (`ScheduleConflictError`, code `STINT_SCHEDULE_CONFLICT`).
 *
 * @example
 * ```ts
 * const schedules = container.resolve(ScheduleClient);
 * await schedules.upsert({ name: "digest.tenant-42", job: SendDigest, cron: "0 8 * * *", timeZone: "Europe/Berlin", payload: { tenantId: 42 } });
 * await schedules.remove("digest.tenant-42");
 * ```
 */
@injectable()
export class ScheduleClient {
  readonly #store: ScheduleStore;

  /** Wraps `store` in a `CheckedScheduleStore` unless it is one, so every schedule is checked once before it is written. */
  constructor(@inject(SCHEDULE_STORE) store: ScheduleStore) {
    this.#store = checkedScheduleStore(store);
  }

  /**
   * Creates the runtime schedule, or changes the one of that name: the
   * newest definition wins, and its next fire is kept unless the cron
   * expression or time zone changed (then it is the first fire after now).
   * Takes what `defineSchedule` takes and checks it the same way (a bad
   * cron or time zone throws a `ConfigError` naming the option); a job
   * kind with a `schema` validates the payload first, as `enqueue` does.
   * Nothing is written when a check fails.
   *
   * @example
   * ```ts
   * const { schedule, created } = await schedules.upsert({ name: "digest.tenant-42", job: SendDigest, cron: "0 8 * * *", payload: { tenantId: 42 } });
   * schedule.nextRunAt; // the next 08:00 UTC
   * ```
   */
  async upsert<T>(options: ScheduleOptions<T>): Promise<UpsertScheduleResult> {
    const { spec } = defineSchedule(options);
    await assertPayloadFitsSchema(options.job.name, options.job.schema, options.payload);
    return this.#store.upsertSchedule({ schedule: spec, firstRunAt });
  }

  /**
   * Deletes the schedule of that name now; resolves with whether there was
   * one. A schedule the code still declares comes back at its next
   * declaration: take it out of the code to stop it for good.
   */
  async remove(name: string): Promise<boolean> {
    return (await this.#store.removeSchedule({ name })) !== undefined;
  }

  /** Every stored schedule, declared and runtime, by name. */
  list(): Promise<readonly ScheduleRecord[]> {
    return this.#store.listSchedules();
  }
}
