import { defineJob, type ItemOf } from "@stint/core";
import { z } from "zod";

/**
 * The `weekly-report` job kind: the invoicing report of one week,
 * aggregated into a stored report, then e-mailed by a chained
 * `send-report-email` job to `recipient`. `weekStart` is the Monday the
 * week starts on, `YYYY-MM-DD` (UTC); left out, as by the weekly schedule,
 * it is the last full week before the job was enqueued.
 *
 * @example
 * ```ts
 * await client.enqueue(WeeklyReport, { weekStart: "2025-06-02", recipient: "finance@example.com" });
 * await client.enqueue(WeeklyReport, { weekStart: "2025-06-04", recipient: "finance@example.com" });
 * // PayloadSchemaError: … failed its schema: payload.weekStart: Not a Monday
 * ```
 */
export const WeeklyReport = defineJob("weekly-report", {
  schema: z.strictObject({
    weekStart: z.iso.date({ abort: true }).refine(isMonday, "Not a Monday").optional(),
    recipient: z.email(),
  }),
  maxAttempts: 5,
  timeoutMs: 120_000,
});

/** Payload of a `weekly-report` job. */
export type WeeklyReport = ItemOf<typeof WeeklyReport>;

/** Whether a valid `YYYY-MM-DD` date falls on a Monday (UTC). */
function isMonday(date: string): boolean {
  return new Date(`${date}T00:00:00Z`).getUTCDay() === 1;
}
