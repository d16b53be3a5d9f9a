import { coerceError, describeError } from "../errors/coerce-error";
import { ErrorCode } from "../errors/error-codes";
import { errorCodeOf, hasErrorCode } from "../errors/stint-error";
import type { ClaimedJob } from "../job/job-record";
import { compileRedaction, secretValuesOf } from "../job/secret-fields";
import type { Logger } from "../logging/logger";
import type { CompletedJob, FenceResult, JobFailure, JobStore } from "../store/job-store";
import type { AttemptOutcome, WriteResult } from "./attempt-outcome";
import type { StoreRetryPolicy } from "./store-retry-policy";
import { WriteBatcher } from "./write-batcher";

/**
 * Writes each attempt's outcome with one fenced store call (successes
 * group-committed with others) and logs it: per-job lines at `debug` for
 * the expected outcomes, `warn` and `error` for failures. A write the store
 * refuses (not an outage: the statement itself) is not left to lapse: the
 * attempt is recorded as failed with the store's reason instead.
 */
export class OutcomeRecorder {
  readonly #store: JobStore;
  readonly #workerId: string;
  readonly #secretFields: readonly string[];
  readonly #policy: StoreRetryPolicy;
  readonly #completions: WriteBatcher<CompletedJob>;
  /** How long a write is retried through an outage: while the lease could still be ours. */
  readonly #giveUpAfterMs: number;
  /** Per-job `debug` lines are written: checked once, so a dropped line costs nothing. */
  readonly #debug: boolean;

  constructor(parts: {
    readonly store: JobStore;
    readonly workerId: string;
    readonly secretFields: readonly string[];
    readonly policy: StoreRetryPolicy;
    readonly leaseMs: number;
    readonly log: Logger;
  }) {
    this.#store = parts.store;
    this.#workerId = parts.workerId;
    this.#secretFields = parts.secretFields;
    this.#policy = parts.policy;
    this.#giveUpAfterMs = parts.leaseMs;
    this.#debug = parts.log.isLevelEnabled?.("debug") ?? true;
    const { store, workerId } = parts;
    this.#completions = new WriteBatcher({
      policy: parts.policy, giveUpAfterMs: parts.leaseMs, log: parts.log, logFields: { workerId }, noun: "completions",
      write: (jobs: readonly CompletedJob[]) => store.completeJobs({ workerId, jobs }),
    });
  }

  /** Waits until every success handed in so far is written. */
  drain(): Promise<void> {
    return this.#completions.drain();
  }

  /** Writes `outcome` for `job` and logs it; `log` gives the job's logger (made only when a line is written). */
  async record(job: ClaimedJob, outcome: AttemptOutcome, log: () => Logger): Promise<WriteResult> {
    const written = await this.#write(job, outcome);
    this.#log(job, outcome, written, log);
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
   * Runs a fenced write with the retry policy. When the store refuses the
   * statement itself (not an outage), the attempt is recorded as failed with
   * the store's reason, so the job does not sit `running` until its lease
   * lapses and hide the real error.
   */
  async #fenced(job: ClaimedJob, write: () => Promise<FenceResult>): Promise<WriteResult> {
    try {
      const result = await this.#policy.run(write, { giveUpAfterMs: this.#giveUpAfterMs });
      return result?.applied ? "applied" : "fence-missed";
    } catch (thrown) {
      if (hasErrorCode(thrown, ErrorCode.Infrastructure)) return "failed";
      const failure: JobFailure = { message: `the outcome could not be recorded: ${describeError(thrown)}`, code: errorCodeOf(thrown) ?? ErrorCode.Database };
      try {
        const fallback = job.attempt >= job.maxAttempts ? await this.#dead(job, failure) : await this.#retry(job, 0, failure, true);
        return fallback.applied ? "applied" : "fence-missed";
      } catch {
        return "failed";
      }
    }
  }

  #retry(job: ClaimedJob, delayMs: number, failure: JobFailure | null, spendAttempt: boolean): Promise<FenceResult> {
    return this.#store.scheduleRetry({ workerId: this.#workerId, job: { id: job.id, attempt: job.attempt }, delayMs, failure, spendAttempt });
  }

  #dead(job: ClaimedJob, failure: JobFailure): Promise<FenceResult> {
    return this.#store.markDead({ workerId: this.#workerId, job: { id: job.id, attempt: job.attempt }, failure });
  }

  /** The error text and code stored with a failed attempt, with the job's secret payload values redacted. */
  #failureOf(job: ClaimedJob, error: unknown): JobFailure {
    const scrub = compileRedaction(secretValuesOf(job.payload, this.#secretFields));
    return { message: describeError(error, scrub), code: errorCodeOf(error) ?? ErrorCode.Unknown };
  }

  #log(job: ClaimedJob, outcome: AttemptOutcome, written: WriteResult, log: () => Logger): void {
    if (written === "applied" && (outcome.kind === "succeeded" || outcome.kind === "snoozed") && !this.#debug) return;
    const label = `job ${job.id} (${job.queue}, attempt ${job.attempt}/${job.maxAttempts})`;
    const fields = { durationMs: Math.round(outcome.durationMs) };
    if (written === "failed") {
      log().error(`Could not record the outcome of ${label} (${outcome.kind}); it runs again once its lease lapses`, fields);
      return;
    }
    if (written === "fence-missed") {
      log().warn(`Another worker owns ${label} now; its ${outcome.kind} outcome is discarded`, fields);
      return;
    }
    switch (outcome.kind) {
      case "succeeded":
        log().debug(`Completed ${label} in ${fields.durationMs} ms`, fields);
        return;
      case "snoozed":
        log().debug(`Snoozed ${label} for ${outcome.delayMs} ms`, fields);
        return;
      case "released":
        log().info(`Gave back ${label}: the worker is stopping; its attempt is not spent`, fields);
        return;
      case "retry":
        log().warn(`${capitalise(label)} failed: ${coerceError(outcome.error).message}; retrying in ${outcome.delayMs} ms`, { ...fields, errorCode: errorCodeOf(outcome.error) ?? ErrorCode.Unknown });
        return;
      case "dead": {
        const code = errorCodeOf(outcome.error) ?? ErrorCode.Unknown;
        const why = code === ErrorCode.Parse ? "has an invalid payload and is dead" : "is dead";
        log().error(`${capitalise(label)} ${why}: ${coerceError(outcome.error).message}`, { ...fields, errorCode: code });
        return;
      }
      case "lease-lost":
        log().warn(`Stopped ${label}: ${outcome.error.message}; ${lapseConsequence(job, outcome.started)}`, fields);
        return;
    }
  }
}

function capitalise(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

function lapseConsequence(job: ClaimedJob, started: boolean): string {
  if (!started) return "it never started and keeps its attempt";
  return job.attempt >= job.maxAttempts ? "no attempt is left, so it is dead" : "the job is due again";
}
