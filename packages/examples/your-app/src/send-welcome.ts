import { defineJob } from "@stint/core";
import { z } from "zod";

/** Payload of a `send-welcome` job: greet one new user. */
const sendWelcomeSchema = z.strictObject({
  userId: z.int().positive(),
});

/** The `send-welcome` job kind, imported by the producer and the worker alike: its payload is checked on enqueue and on claim. */
export const SendWelcome = defineJob<typeof sendWelcomeSchema, { greeting: string }>("send-welcome", {
  schema: sendWelcomeSchema,
  maxAttempts: 5,
  timeoutMs: 10_000,
});

/** What a `send-welcome` worker gets: `{ userId: number }`. */
export type SendWelcome = z.infer<typeof sendWelcomeSchema>;
