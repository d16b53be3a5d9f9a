import { describeError } from "../errors/coerce-error";
import { ErrorCode } from "../errors/error-codes";
import { errorCodeOf, hasErrorCode } from "../errors/stint-error";
import type { ClaimedJob } from "../job/job-record";
import { compileRedaction, secretValuesOf } from "../job/secret-fields";
import type { Logger } from "../logging/logger";
import type { RunEvents } from "../events/run-events";
import type { CompletedJob, DeadJob, JobFailure, JobStore, RetryingJob } from "../store/job-store";
import type { AttemptOutcome, WriteResult } from "./attempt-outcome";
import type { StoreRetryPolicy } from "./store-retry-policy";
import { WriteBatcher, type RowResult } from "./write-batcher";

/**
 * Writes each attempt's outcome with a fenced store write, group-committed
 * with the other outcomes of its kind (successes, retries, deaths; see
 * {@link WriteBatcher}), then emits its events (see `RunEvents`; the log
 * lines are one of their subscribers). A write the store
 * refuses (not an outage: the statement itself) is not left to lapse: the
 * attempt is recorded as failed with the store's reason instead.
 */
export class OutcomeRecorder {
  readonly #secretFields: readonly string[];
  readonly #completions: WriteBatcher<CompletedJob>;
  readonly #retries: WriteBatcher<RetryingJob>;
  readonly #deaths: WriteBatcher<DeadJob>;
  readonly #events: RunEvents;

  constructor(parts: {
    readonly store: JobStore;
    readonly workerId: string;
    readonly secretFields: readonly string[];
    readonly policy: StoreRetryPolicy;
    readonly leaseMs: number;
    readonly log: Logger;
    readonly events: RunEvents;
  }) {
    const { store, workerId } = parts;
    this.#secretFields = parts.secretFields;
    this.#events = parts.events;
    // A write is retried through an outage while the lease could still be ours.
    const shared = { policy: parts.policy, giveUpAfterMs: parts.leaseMs, log: parts.log, logFields: { workerId } };
    this.#completions = new WriteBatcher({ ...shared, noun: "completions", write: (jobs: readonly CompletedJob[]) => store.completeJobs({ workerId, jobs }) });
    this.#retries = new WriteBatcher({ ...shared, noun: "retries", write: (jobs: readonly RetryingJob[]) => store.scheduleRetries({ workerId, jobs }) });
    this.#deaths = new WriteBatcher({ ...shared, noun: "dead jobs", write: (jobs: readonly DeadJob[]) => store.markJobsDead({ workerId, jobs }) });
  }

  /** Waits until every outcome handed in so far is written, fallbacks included. */
  async drain(): Promise<void> {
    const batchers = [this.#completions, this.#retries, this.#deaths];
    do await Promise.all(batchers.map((batcher) => batcher.drain()));
    while (batchers.some((batcher) => batcher.busy));
  }

  /** Writes `outcome` for `job` and emits its events. */
  async record(job: ClaimedJob, outcome: AttemptOutcome): Promise<WriteResult> {
    const written = await this.#write(job, outcome);
    this.#events.jobOutcome(job, outcome, written);
    return written;
  }

  async #write(job: ClaimedJob, outcome: AttemptOutcome): Promise<WriteResult> {
    switch (outcome.kind) {
      case "succeeded":
        if (outcome.inTransaction) return "applied";
        return this.#completions.write({ id: job.id, attempt: job.attempt, resultJson: outcome.resultJson, durationMs: Math.round(outcome.durationMs) }).catch(() => "failed" as const);
      case "retry":
        return this.#fenced(job, () => this.#retry(job, outcome.delayMs, this.#failureOf(job, outcome.error), true));
      case "snoozed":
        return this.#fenced(job, () => this.#retry(job, outcome.delayMs, null, false));
      case "released":
        return this.#fenced(job, () => this.#retry(job, 0, null, false));
      case "dead":
        return this.#fenced(job, () => this.#dead(job, this.#failureOf(job, outcome.error)));
      case "lease-lost":
        // Nothing ran: back without spending the attempt. It ran: failed and due now (dead with no attempt left), as
        // a lease rescue would do later — if no other worker has the job yet; otherwise the fence matches nothing.
        if (!outcome.started) return this.#fenced(job, () => this.#retry(job, 0, null, false));
        return this.#fenced(job, () =>
          job.attempt >= job.maxAttempts ? this.#dead(job, this.#failureOf(job, outcome.error)) : this.#retry(job, 0, this.#failureOf(job, outcome.error), true),
        );
    }
  }

  /**
   * Runs a fenced write (the batcher applies the retry policy). When the
   * store refuses the job's own statement (not an outage), the attempt is
   * recorded as failed with the store's reason, so the job does not sit
   * `running` until its lease lapses and hide the real error.
   */
  async #fenced(job: ClaimedJob, write: () => Promise<RowResult>): Promise<WriteResult> {
    try {
      return await write();
    } catch (thrown) {
      if (hasErrorCode(thrown, ErrorCode.Infrastructure)) return "failed";
      const failure: JobFailure = { message: `the outcome could not be recorded: ${describeError(thrown)}`, code: errorCodeOf(thrown) ?? ErrorCode.Database };
      try {
        return job.attempt >= job.maxAttempts ? await this.#dead(job, failure) : await this.#retry(job, 0, failure, true);
      } catch {
        return "failed";
      }
    }
  }

  #retry(job: ClaimedJob, delayMs: number, failure: JobFailure | null, spendAttempt: boolean): Promise<RowResult> {
    return this.#retries.write({ id: job.id, attempt: job.attempt, delayMs, failure, spendAttempt });
  }

  #dead(job: ClaimedJob, failure: JobFailure): Promise<RowResult> {
    return this.#deaths.write({ id: job.id, attempt: job.attempt, failure });
  }

  /** The error text and code stored with a failed attempt, with the job's secret payload values redacted. */
  #failureOf(job: ClaimedJob, error: unknown): JobFailure {
    const scrub = compileRedaction(secretValuesOf(job.payload, this.#secretFields));
    return { message: describeError(error, scrub), code: errorCodeOf(error) ?? ErrorCode.Unknown };
  }
}
