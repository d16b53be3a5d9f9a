import { defineSchedule } from "@stint/core";
import { CLEANUP_TARGETS, NightlyCleanup } from "./jobs/nightly-cleanup";
import { WeeklyReport } from "./jobs/weekly-report";

/**
 * The weekly invoicing report: Mondays at 06:00 Berlin time, for the week
 * that just ended (the payload names no `weekStart`; see `WeeklyReport`).
 */
export const WeeklyReportSchedule = defineSchedule({
  name: "weekly-invoicing-report",
  job: WeeklyReport,
  cron: "0 6 * * 1",
  timeZone: "Europe/Berlin",
  payload: { recipient: "finance@example.com" },
});

/** One nightly cleanup per target, at 03:00 UTC, keeping 90 days. */
export const NightlyCleanupSchedules = CLEANUP_TARGETS.map((target) =>
  defineSchedule({
    name: `nightly-cleanup.${target}`,
    job: NightlyCleanup,
    cron: "0 3 * * *",
    timeZone: "UTC",
    payload: { target, olderThanDays: 90 },
  }),
);

/**
 * Every periodic job of the example application, registered by the
 * composition root and declared to the `schedules` table when a run
 * starts, and every hour while it runs.
 *
 * @example
 * ```ts
 * registerSchedules(container, EXAMPLE_SCHEDULES);
 * ```
 */
export const EXAMPLE_SCHEDULES = Object.freeze([WeeklyReportSchedule, ...NightlyCleanupSchedules]);
