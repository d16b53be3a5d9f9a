import { AbstractQueueWorker, JOB_STORE, LOGGER, type JobStore, type Logger } from "@stint/core";
import { inject, injectable } from "tsyringe";
import { SendWelcome } from "./send-welcome";

/** Greets a new user; the greeting is the job's result. */
@injectable()
export class SendWelcomeWorker extends AbstractQueueWorker<SendWelcome> {
  readonly job = SendWelcome;

  constructor(@inject(JOB_STORE) store: JobStore, @inject(LOGGER) log: Logger) {
    super(store, log, { concurrency: 4 });
  }

  protected override parse(payload: unknown): SendWelcome {
    const userId = (payload as { userId?: unknown } | null)?.userId;
    if (typeof userId !== "number" || !Number.isInteger(userId)) {
      throw new Error(`userId must be an integer, got ${JSON.stringify(userId)}`);
    }
    return { userId };
  }

  protected override async processItem(item: SendWelcome): Promise<{ greeting: string }> {
    return { greeting: `Welcome, user ${item.userId}!` };
  }
}
