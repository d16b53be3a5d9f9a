import { defineJob, type ItemOf } from "@stint/core";
import { z } from "zod";

/**
 * The `send-report-email` job kind, chained by the weekly report worker.
 * Its payload is described by a zod schema: `enqueue` (and `ctx.enqueue`)
 * refuses a payload that fails it and inserts nothing, and the worker
 * validates each stored payload with it before sending.
 *
 * @example
 * ```ts
 * await ctx.enqueue(SendReportEmail, { reportId: 3, recipient: "finance@example.com" });
 * await ctx.enqueue(SendReportEmail, { reportId: 3, recipient: "finance" });
 * // PayloadSchemaError: payload of queue "send-report-email" failed its schema: payload.recipient: Invalid email address
 * ```
 */
export const SendReportEmail = defineJob("send-report-email", {
  schema: z.strictObject({
    reportId: z.int().positive(),
    recipient: z.email(),
  }),
  maxAttempts: 8,
  timeoutMs: 30_000,
});

/** Payload of a `send-report-email` job: e-mail a stored report. */
export type SendReportEmail = ItemOf<typeof SendReportEmail>;
