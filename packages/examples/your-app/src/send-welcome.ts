import { defineJob } from "@stint/core";

/** Payload of a `send-welcome` job: greet one new user. */
export interface SendWelcome {
  readonly userId: number;
}

/** The `send-welcome` job kind, imported by the producer and the worker alike. */
export const SendWelcome = defineJob<SendWelcome>("send-welcome", { maxAttempts: 5, timeoutMs: 10_000 });
