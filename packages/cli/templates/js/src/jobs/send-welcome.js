const { defineJob, JOB_STORE, LOGGER, SchemaQueueWorker } = require("@stint/core");
const { z } = require("zod");

const schema = z.strictObject({ userId: z.int().positive() });

/** The `send-welcome` job kind: `client.enqueue(SendWelcome, { userId: 42 })` checks the payload against its schema. */
const SendWelcome = defineJob("send-welcome", { schema, maxAttempts: 5, timeoutMs: 10_000 });

/** Runs `send-welcome` jobs, four at a time; what `processItem` returns is stored as the job's result. */
class SendWelcomeWorker extends SchemaQueueWorker {
  // What the container passes to the constructor, in order: no decorators needed.
  static inject = [JOB_STORE, LOGGER];
  job = SendWelcome;

  constructor(store, log) {
    super(store, log, { concurrency: 4 });
  }

  async processItem(item) {
    return { greeting: `Welcome, user ${item.userId}!` };
  }
}

module.exports = { SendWelcome, SendWelcomeWorker };
