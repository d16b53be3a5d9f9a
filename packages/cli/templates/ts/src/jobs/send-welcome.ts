import { defineJob, JOB_STORE, LOGGER, SchemaQueueWorker, type JobStore, type Logger } from "@stint/core";
import { inject, injectable } from "tsyringe";
import { z } from "zod";

const schema = z.strictObject({ userId: z.int().positive() });

/** The `send-welcome` job kind: `client.enqueue(SendWelcome, { userId: 42 })` checks the payload against its schema. */
export const SendWelcome = defineJob<typeof schema, { greeting: string }>("send-welcome", { schema, maxAttempts: 5, timeoutMs: 10_000 });
export type SendWelcome = z.infer<typeof schema>;

/** Runs `send-welcome` jobs, four at a time; what `processItem` returns is stored as the job's result. */
@injectable()
export class SendWelcomeWorker extends SchemaQueueWorker<SendWelcome, { greeting: string }> {
  readonly job = SendWelcome;

  constructor(@inject(JOB_STORE) store: JobStore, @inject(LOGGER) log: Logger) {
    super(store, log, { concurrency: 4 });
  }

  protected override async processItem(item: SendWelcome): Promise<{ greeting: string }> {
    return { greeting: `Welcome, user ${item.userId}!` };
  }
}
