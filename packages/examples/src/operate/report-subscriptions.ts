import { ScheduleClient, type ScheduleRecord } from "@stint/core";
import type { DependencyContainer } from "tsyringe";
import { WeeklyReport } from "../jobs/weekly-report";

/** A customer who wants the weekly invoicing report in their own inbox, at 07:00 on Mondays where they are. */
export interface ReportSubscription {
  readonly customerId: number;
  readonly recipient: string;
  /** IANA time zone, e.g. `America/New_York`. */
  readonly timeZone: string;
}

/**
 * Schedules a customer's weekly report while the application runs: one
 * runtime schedule per customer, created or changed by the same call, and
 * kept until the customer unsubscribes (it does not depend on any
 * process declaring it, as the schedules in `schedules.ts` do). The
 * report's schema checks the recipient before anything is stored.
 *
 * @example
 * ```ts
 * await subscribeToWeeklyReport(container, { customerId: 42, recipient: "ap@customer.example", timeZone: "America/New_York" });
 * await unsubscribeFromWeeklyReport(container, 42);
 * ```
 */
export async function subscribeToWeeklyReport(container: DependencyContainer, subscription: ReportSubscription): Promise<ScheduleRecord> {
  const schedules = container.resolve(ScheduleClient);
  const { schedule } = await schedules.upsert({
    name: subscriptionName(subscription.customerId),
    job: WeeklyReport,
    cron: "0 7 * * 1",
    timeZone: subscription.timeZone,
    payload: { recipient: subscription.recipient },
  });
  return schedule;
}

/** Stops a customer's weekly report; false when they had none. */
export async function unsubscribeFromWeeklyReport(container: DependencyContainer, customerId: number): Promise<boolean> {
  return container.resolve(ScheduleClient).remove(subscriptionName(customerId));
}

function subscriptionName(customerId: number): string {
  return `weekly-report.customer-${customerId}`;
}
