import { JOB_STORE, LOGGER, SchemaQueueWorker, type JobStore, type Logger } from "@stint/core";
import { inject, injectable } from "tsyringe";
import { SendWelcome } from "./send-welcome";

/** Greets a new user; the greeting is the job's result. The kind's schema checks each payload before `processItem`. */
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
