import { defineJob, type ItemOf } from "@stint/core";
import { z } from "zod";

const sendNewsletterPayload = z.strictObject({
  issue: z.int32().positive(),
  to: z.email(),
});

/**
 * The `send-newsletter` job kind: one issue of the newsletter to one
 * subscriber. Its worker sends them in batches through a bulk mail API.
 *
 * @example
 * ```ts
 * await client.enqueueMany(SendNewsletter, subscribers.map((to) => ({ payload: { issue: 42, to } })));
 * ```
 */
export const SendNewsletter = defineJob<typeof sendNewsletterPayload>("send-newsletter", {
  schema: sendNewsletterPayload,
  maxAttempts: 5,
  timeoutMs: 60_000,
});

/** Payload of a `send-newsletter` job. */
export type SendNewsletter = ItemOf<typeof SendNewsletter>;
