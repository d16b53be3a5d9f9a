import { describeError, errorSummary } from "../errors/coerce-error";
import { ErrorCode } from "../errors/error-codes";
import { errorCodeOf, hasErrorCode } from "../errors/stint-error";
import type { ClaimedJob } from "../job/job-record";
import { compileRedaction, secretValuesOf } from "../job/secret-fields";
import type { Logger } from "../logging/logger";
import type { RunEvents } from "../events/run-events";
import type { CompletedJob, DeadJob, JobFailure, JobStore, RetryingJob } from "../store/job-store";
import { deadLetterTarget } from "../job/dead-letter";
import { EMPTY_META } from "../job/job-meta";
import type { AttemptOutcome, SucceededOutcome, WriteResult } from "./attempt-outcome";
import type { LeaseKeeper } from "./lease-keeper";
import type { StoreRetryPolicy } from "./store-retry-policy";
import { WriteBatcher, type GroupRowResult, type RowResult } from "./write-batcher";

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
  readonly #died: (job: ClaimedJob, error: unknown) => void;
  readonly #store: JobStore;
  readonly #workerId: string;

  constructor(parts: {
    readonly store: JobStore;
    readonly workerId: string;
    readonly secretFields: readonly string[];
    readonly policy: StoreRetryPolicy;
    readonly leaseMs: number;
    readonly log: Logger;
    readonly events: RunEvents;
    /** Told of every death this recorder commits, with the error it ended with (where `onDead` starts). */
    readonly died?: (job: ClaimedJob, error: unknown) => void;
    /** Every write goes through its `confirm`: it learns which claims are on disk and whether writes are confirmed. */
    readonly writes: Pick<LeaseKeeper, "confirm">;
  }) {
    const { store, workerId, writes } = parts;
    this.#store = store;
    this.#workerId = workerId;
    this.#secretFields = parts.secretFields;
    this.#events = parts.events;
    this.#died = parts.died ?? (() => undefined);
    // A write is retried through an outage while the lease could still be ours.
    const shared = { policy: parts.policy, giveUpAfterMs: parts.leaseMs, log: parts.log, logFields: { workerId } };
    this.#completions = new WriteBatcher({
      ...shared,
      noun: "completions",
      // Every outcome commits synchronously, so one that changed a row proves the claims before it flushed.
      write: (jobs: readonly CompletedJob[]) => writes.confirm(() => store.completeJobs({ workerId, jobs })),
    });
    this.#retries = new WriteBatcher({
      ...shared,
      noun: "retries",
      write: (jobs: readonly RetryingJob[]) => writes.confirm(() => store.scheduleRetries({ workerId, jobs })),
    });
    this.#deaths = new WriteBatcher({
      ...shared,
      noun: "dead jobs",
      write: (jobs: readonly DeadJob[]) => writes.confirm(() => store.markJobsDead({ workerId, jobs })),
    });
  }

  /** Waits until every outcome handed in so far is written, fallbacks included. */
  async drain(): Promise<void> {
    const batchers = [this.#completions, this.#retries, this.#deaths];
    do await Promise.all(batchers.map((batcher) => batcher.drain()));
    while (batchers.some((batcher) => batcher.busy));
  }

  /**
   * Writes `outcome` for `job` and emits its events. A fenced write that
   * matched nothing because an operator cancelled this very attempt (the
   * cancel's notice had not reached the worker yet) comes back as
   * `cancelled`, not as a lost lease.
   */
  async record(job: ClaimedJob, outcome: AttemptOutcome): Promise<WriteResult> {
    let written = await this.#write(job, outcome);
    if (written === "fence-missed" && (await this.#cancelledInAttempt(job))) written = "cancelled";
    this.#events.jobOutcome(job, outcome, written);
    return written;
  }

  /**
   * Writes the successes of several jobs (a batch's) as one group of the
   * next completion statement and emits each one's events, as {@link record}
   * does for one; resolves with each one's result, in order, and never
   * rejects. None may have been completed by `ctx.transaction` already.
   */
  recordSucceeded(jobs: readonly ClaimedJob[], outcomes: readonly SucceededOutcome[]): Promise<WriteResult[]> {
    const rows = new Array<CompletedJob>(jobs.length);
    for (let index = 0; index < jobs.length; index += 1) {
      const { id, attempt } = jobs[index]!;
      const { resultJson, durationMs } = outcomes[index]!;
      rows[index] = { id, attempt, resultJson, durationMs: Math.round(durationMs) };
    }
    return this.#completions.writeMany(rows).then((results) => this.#settleSucceeded(jobs, outcomes, results));
  }

  /** Each success's result once its group is written, with its events. */
  async #settleSucceeded(jobs: readonly ClaimedJob[], outcomes: readonly SucceededOutcome[], results: readonly GroupRowResult[]): Promise<WriteResult[]> {
    const written = new Array<WriteResult>(jobs.length);
    const announce = this.#events.wants("job.succeeded");
    for (let index = 0; index < jobs.length; index += 1) {
      const job = jobs[index]!;
      const result = results[index]!;
      let one: WriteResult = result instanceof Error ? "failed" : result;
      if (one === "fence-missed" && (await this.#cancelledInAttempt(job))) one = "cancelled";
      if (one !== "applied" || announce) this.#events.jobOutcome(job, outcomes[index]!, one);
      written[index] = one;
    }
    return written;
  }

  /** Whether the job is `cancelled` in this attempt of this worker; false when that cannot be read. */
  async #cancelledInAttempt(job: ClaimedJob): Promise<boolean> {
    try {
      const row = await this.#store.getJob({ id: job.id });
      return row?.state === "cancelled" && row.attempts === job.attempt && row.lockedBy === this.#workerId;
    } catch {
      return false;
    }
  }

  async #write(job: ClaimedJob, outcome: AttemptOutcome): Promise<WriteResult> {
    const durationMs = Math.round(outcome.durationMs);
    switch (outcome.kind) {
      case "succeeded":
        if (outcome.inTransaction) return "applied";
        return this.#completions.write({ id: job.id, attempt: job.attempt, resultJson: outcome.resultJson, durationMs }).catch(() => "failed" as const);
      case "retry":
        return this.#fenced(job, durationMs, () =>
          this.#retry(job, { delayMs: outcome.delayMs, failure: this.#failureOf(job, outcome.error), spendAttempt: true, outcome: "failed", durationMs }),
        );
      case "snoozed":
        return this.#fenced(job, durationMs, () =>
          this.#retry(job, { delayMs: outcome.delayMs, failure: null, spendAttempt: false, outcome: "snoozed", durationMs }),
        );
      case "released":
        return this.#fenced(job, durationMs, () =>
          this.#retry(job, { delayMs: 0, failure: null, spendAttempt: false, outcome: outcome.started ? "shutdown" : null, durationMs }),
        );
      case "dead":
        return this.#fenced(job, durationMs, () =>
          this.#dead(job, { failure: this.#failureOf(job, outcome.error), outcome: "dead", durationMs }, outcome.error),
        );
      case "cancelled":
        // The cancel wrote the job's state and this attempt's history; the fence would refuse anything more.
        return "cancelled";
      case "lease-lost":
        // Nothing ran: back without spending the attempt. It ran: failed and due now (dead with no attempt left), as
        // a lease rescue would do later — if no other worker has the job yet; otherwise the fence matches nothing.
        if (!outcome.started)
          return this.#fenced(job, durationMs, () => this.#retry(job, { delayMs: 0, failure: null, spendAttempt: false, outcome: null, durationMs }));
        return this.#fenced(job, durationMs, () =>
          job.attempt >= job.maxAttempts
            ? this.#dead(job, { failure: this.#failureOf(job, outcome.error), outcome: "lease-lost", durationMs }, outcome.error)
            : this.#retry(job, { delayMs: 0, failure: this.#failureOf(job, outcome.error), spendAttempt: true, outcome: "lease-lost", durationMs }),
        );
    }
  }

  /**
   * Runs a fenced write (the batcher applies the retry policy). When the
   * store refuses the job's own statement (not an outage), the attempt is
   * recorded as failed with the store's reason, so the job does not sit
   * `running` until its lease lapses and hide the real error.
   */
  async #fenced(job: ClaimedJob, durationMs: number, write: () => Promise<RowResult>): Promise<WriteResult> {
    try {
      return await write();
    } catch (thrown) {
      if (hasErrorCode(thrown, ErrorCode.Infrastructure)) return "failed";
      const summary = `the outcome could not be recorded: ${errorSummary(thrown)}`;
      const failure: JobFailure = {
        message: `the outcome could not be recorded: ${describeError(thrown)}`,
        code: errorCodeOf(thrown) ?? ErrorCode.Database,
        summary,
      };
      try {
        return job.attempt >= job.maxAttempts
          ? await this.#dead(job, { failure, outcome: "dead", durationMs }, thrown)
          : await this.#retry(job, { delayMs: 0, failure, spendAttempt: true, outcome: "failed", durationMs });
      } catch {
        return "failed";
      }
    }
  }

  #retry(job: ClaimedJob, retry: Omit<RetryingJob, "id" | "attempt">): Promise<RowResult> {
    return this.#retries.write({ id: job.id, attempt: job.attempt, ...retry });
  }

  /** Writes a death; once it is committed, `died` hears of it with `error`. */
  async #dead(job: ClaimedJob, dead: Omit<DeadJob, "id" | "attempt">, error: unknown): Promise<RowResult> {
    const result = await this.#deaths.write({ id: job.id, attempt: job.attempt, ...dead, deadLetter: deadLetterTarget(job.meta ?? EMPTY_META) !== null });
    if (result === "applied") this.#died(job, error);
    return result;
  }

  /** The error text, summary and code stored with a failed attempt, with the job's secret payload values redacted. */
  #failureOf(job: ClaimedJob, error: unknown): JobFailure {
    const scrub = compileRedaction(secretValuesOf(job.payload, this.#secretFields));
    return { message: describeError(error, scrub), code: errorCodeOf(error) ?? ErrorCode.Unknown, summary: errorSummary(error, scrub) };
  }
}
