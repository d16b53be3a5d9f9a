import { defineJob } from "@stint/core";
import { PayloadFields } from "./payload-fields";

/** Payload of a `send-report-email` job: e-mail a stored report. */
export interface SendReportEmail {
  readonly reportId: number;
  readonly recipient: string;
}

/**
 * The `send-report-email` job kind, chained by the weekly report worker.
 *
 * @example
 * ```ts
 * await ctx.enqueue(SendReportEmail, { reportId: 3, recipient: "finance@example.com" });
 * ```
 */
export const SendReportEmail = defineJob<SendReportEmail>("send-report-email", { maxAttempts: 8, timeoutMs: 30_000 });

/**
 * Validates a stored `send-report-email` payload.
 *
 * @example
 * ```ts
 * parseSendReportEmail({ reportId: 3, recipient: "finance@example.com" }); // ok
 * parseSendReportEmail({ reportId: 3, recipient: "finance" });
 * // throws: recipient must be an e-mail address, got "finance"
 * ```
 */
export function parseSendReportEmail(payload: unknown): SendReportEmail {
  const fields = PayloadFields.of(payload, ["reportId", "recipient"]);
  return { reportId: fields.positiveInteger("reportId"), recipient: fields.email("recipient") };
}
