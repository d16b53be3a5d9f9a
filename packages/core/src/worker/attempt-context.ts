import { ConfigError } from "../errors/config-errors";
import { LeaseLostError } from "../errors/job-errors";
import { buildNewJob } from "../job/enqueue-options";
import type { ClaimedJob } from "../job/job-record";
import { redactingLogger, secretValuesOf } from "../job/secret-fields";
import { serializeResult } from "../job/serialize-payload";
import type { Logger } from "../logging/logger";
import type { JobStore } from "../store/job-store";
import type { JobContext } from "./job-context";

/** What an attempt's context learned that the outcome recorder needs. */
export interface AttemptState {
  /** `ctx.transaction` committed the job's success: nothing is left to write. */
  completedInTransaction: boolean;
}

/**
 * Builds the `JobContext` of one attempt: its logger with the job's fields,
 * chaining, the effects ledger (`once`) and transactional completion.
 */
export function createAttemptContext(parts: {
  readonly store: JobStore;
  readonly workerId: string;
  readonly log: Logger;
  readonly job: ClaimedJob;
  readonly signal: AbortSignal;
  /** The job kind's `secretFields`: their values are redacted from every line of the job's logger. */
  readonly secretFields?: readonly string[];
}): { readonly ctx: JobContext; readonly state: AttemptState } {
  const { store, workerId, job, signal } = parts;
  const state: AttemptState = { completedInTransaction: false };
  const ctx: JobContext = {
    job,
    workerId,
    signal,
    log: redactingLogger(
      parts.log.child({ jobId: job.id, queue: job.queue, attempt: job.attempt, maxAttempts: job.maxAttempts, workerId }),
      secretValuesOf(job.payload, parts.secretFields ?? []),
    ),
    enqueue: (definition, payload, options) => store.enqueue(buildNewJob(definition, payload, options), options?.transaction),
    once: async <R>(key: string, effect: (transaction: unknown) => Promise<R>): Promise<R> => {
      if (typeof key !== "string" || key.length === 0 || key.length > 512) {
        throw new ConfigError("key", "ctx.once needs a non-empty key of at most 512 characters");
      }
      const { result } = await store.runEffectOnce({ key, jobId: job.id, resultJson: serializeResult }, effect);
      return result as R;
    },
    transaction: async <R>(work: (transaction: unknown) => Promise<R>): Promise<R> => {
      if (state.completedInTransaction) throw new ConfigError("transaction", "ctx.transaction already completed this job");
      const { applied, value } = await store.completeInTransaction({ workerId, job, resultJson: serializeResult }, work);
      if (!applied) throw new LeaseLostError(`lost the lease on job ${job.id}; the transaction was rolled back`);
      state.completedInTransaction = true;
      return value as R;
    },
  };
  return { ctx, state };
}
