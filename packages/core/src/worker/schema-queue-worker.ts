import type { SchemaJobDefinition } from "../job/job-definition";
import { parseWithSchema } from "../job/payload-schema";
import { AbstractQueueWorker } from "./abstract-queue-worker";

/**
 * The base class of a worker whose job kind has a `schema`: `parse` is
 * written for you. Each claimed payload is validated with the kind's
 * schema (awaited when the validator is asynchronous) and `processItem`
 * gets the schema's output; a payload that fails goes to `dead` at once
 * with the validator's messages and their paths as `last_error`
 * (`invalid payload: payload.email: Invalid email address`), code
 * `STINT_PARSE`, and `processItem` is not called. A job kind without a
 * schema does not compile here: extend {@link AbstractQueueWorker} and write
 * `parse`. Overriding `parse` stays possible, for a payload the schema
 * cannot describe.
 *
 * @example
 * ```ts
 * const SendWelcome = defineJob("send-welcome", { schema: z.object({ email: z.email() }) });
 *
 * @injectable()
 * class SendWelcomeWorker extends SchemaQueueWorker<ItemOf<typeof SendWelcome>> {
 *   readonly job = SendWelcome;
 *   constructor(@inject(JOB_STORE) store: JobStore, @inject(LOGGER) log: Logger) {
 *     super(store, log);
 *   }
 *   protected async processItem(item: { email: string }) {
 *     await mailer.welcome(item.email);
 *   }
 * }
 * ```
 */
export abstract class SchemaQueueWorker<T, R = unknown> extends AbstractQueueWorker<T, R> {
  /** The job kind this worker runs: one defined with a `schema` whose output is `T`. */
  abstract override readonly job: SchemaJobDefinition<any, R, T>;

  /** Validates the stored payload with the job kind's schema; a failure is a `ParseError` with the validator's messages. */
  protected parse(payload: unknown): Promise<T> {
    return parseWithSchema(this.job.schema, payload);
  }
}
