import { defineJob } from "@stint/core";
import { PayloadFields } from "./payload-fields";
import { ValidationError } from "./validation-error";

/** Payload of a `weekly-report` job: the invoicing report of one week. */
export interface WeeklyReport {
  /**
   * The Monday the week starts on, `YYYY-MM-DD` (UTC). Left out (as by the
   * weekly schedule), it is the last full week before the job was enqueued.
   */
  readonly weekStart?: string;
  /** Who gets the report by e-mail once it is built. */
  readonly recipient: string;
}

/**
 * The `weekly-report` job kind: aggregates a week of invoices into a stored
 * report, then chains a `send-report-email` job.
 *
 * @example
 * ```ts
 * await client.enqueue(WeeklyReport, { weekStart: "2025-06-02", recipient: "finance@example.com" });
 * ```
 */
export const WeeklyReport = defineJob<WeeklyReport>("weekly-report", { maxAttempts: 5, timeoutMs: 120_000 });

/**
 * Validates a stored `weekly-report` payload.
 *
 * @example
 * ```ts
 * parseWeeklyReport({ weekStart: "2025-06-02", recipient: "finance@example.com" }); // ok
 * parseWeeklyReport({ weekStart: "2025-06-04", recipient: "finance@example.com" });
 * // throws: weekStart must be a Monday, got "2025-06-04"
 * ```
 */
export function parseWeeklyReport(payload: unknown): WeeklyReport {
  const fields = PayloadFields.of(payload, ["weekStart", "recipient"]);
  const recipient = fields.email("recipient");
  if ((payload as { weekStart?: unknown }).weekStart === undefined) return { recipient };
  const weekStart = fields.isoDate("weekStart");
  if (new Date(`${weekStart}T00:00:00Z`).getUTCDay() !== 1) throw new ValidationError("weekStart", "must be a Monday", weekStart);
  return { weekStart, recipient };
}
