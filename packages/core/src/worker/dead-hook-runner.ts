import { coerceError } from "../errors/coerce-error";
import { HookError, RecordedError } from "../errors/job-errors";
import type { RunEvents } from "../events/run-events";
import type { ClaimedJob, JobRecord } from "../job/job-record";
import { redactingLogger, secretValuesOf } from "../job/secret-fields";
import type { Logger } from "../logging/logger";
import type { DeadHookClaim } from "../store/dead-hook-claim";
import type { JobAttempt, JobStore } from "../store/job-store";
import type { DeadJobContext } from "./dead-job-context";
import type { StoreRetryPolicy } from "./store-retry-policy";
import { WakeUp } from "./wake-up";
import type { ResolvedWorkerOptions } from "./worker-options";
import { WriteBatcher } from "./write-batcher";

/** How often a worker looks for deaths recorded elsewhere (the lease rescue, a worker that died before its hook). */
export const DEAD_HOOK_POLL_MS = 5_000;

/** A death's hook is claimed for `onDeadTimeoutMs` plus this: time to record it done before another worker may call it. */
export const DEAD_HOOK_LEASE_MARGIN_MS = 10_000;

/** Errors of deaths this process recorded, kept for their hooks; the oldest go first past this many. */
const MAX_REMEMBERED_ERRORS = 10_000;

/** The worker's `onDead`, bound to it. */
export type DeadHook = (job: JobRecord, error: Error, ctx: DeadJobContext) => unknown;

/** What a {@link DeadHookRunner} works with. */
export interface DeadHookRunnerParts {
  readonly store: JobStore;
  readonly queue: string;
  readonly workerId: string;
  readonly log: Logger;
  readonly options: ResolvedWorkerOptions;
  readonly events: RunEvents;
  readonly policy: StoreRetryPolicy;
  /** The job kind's `secretFields`, redacted from the hook's logger. */
  readonly secretFields: readonly string[];
  readonly hook: DeadHook;
}

/** How a run ends its hooks: at once (running hooks finish), or after running every pending one. */
export type DeadHooksStop = "now" | "when-empty";

/**
 * Runs a worker's `onDead` hook for the deaths of its queue, outside the
 * handler slots: it claims deaths whose hook has not run (those this
 * worker just recorded, at once; those recorded elsewhere, every
 * {@link DEAD_HOOK_POLL_MS}), at most `concurrency` hooks at a time, calls
 * the hook with a deadline of `onDeadTimeoutMs`, and records each hook as
 * done with a fenced, batched write whether it succeeded, threw or timed
 * out (a failure is logged and emitted as `job.onDeadFailed`; the job's
 * state never changes). A death this process recorded gets the error as
 * thrown; one recorded elsewhere a {@link RecordedError}.
 *
 * @example
 * ```ts
 * const hooks = new DeadHookRunner({ store, queue, workerId, log, options, policy, events, secretFields, hook });
 * hooks.start();
 * hooks.died(job, error); // from the outcome recorder, once the death is committed
 * await hooks.stop("when-empty");
 * ```
 */
export class DeadHookRunner {
  readonly #parts: DeadHookRunnerParts;
  readonly #leaseMs: number;
  readonly #wake = new WakeUp();
  readonly #errors = new Map<string, unknown>();
  readonly #running = new Set<Promise<void>>();
  readonly #finishes: WriteBatcher<JobAttempt>;
  /** Whether a claim may find more: at the start, after a death, after a poll interval, after a claim that filled every free slot. */
  #more = true;
  #stopping: DeadHooksStop | undefined;
  #loop: Promise<void> | undefined;

  constructor(parts: DeadHookRunnerParts) {
    this.#parts = parts;
    this.#leaseMs = parts.options.onDeadTimeoutMs + DEAD_HOOK_LEASE_MARGIN_MS;
    const { store, workerId } = parts;
    this.#finishes = new WriteBatcher({
      write: (hooks: readonly JobAttempt[]) => store.finishDeadHooks({ workerId, hooks }),
      policy: parts.policy,
      giveUpAfterMs: DEAD_HOOK_LEASE_MARGIN_MS,
      log: parts.log,
      noun: "finished onDead hooks",
      logFields: { workerId },
    });
  }

  /** Starts looking for deaths whose hook has not run. */
  start(): void {
    this.#loop ??= this.#claimLoop();
  }

  /** A death this worker just committed: its hook runs soon, with `error` as thrown. */
  died(job: ClaimedJob, error: unknown): void {
    this.#errors.set(deathKey(job.id, job.attempt), error);
    if (this.#errors.size > MAX_REMEMBERED_ERRORS) this.#errors.delete(this.#errors.keys().next().value!);
    this.#more = true;
    this.#wake.wake();
  }

  /**
   * Stops claiming — `"when-empty"` first runs every pending hook of the
   * queue (until `signal` aborts) — then waits for the running hooks (each
   * bounded by `onDeadTimeoutMs`) and for their done-writes.
   */
  async stop(how: DeadHooksStop, signal?: AbortSignal): Promise<void> {
    this.#stopping = how;
    const now = (): void => {
      this.#stopping = "now";
      this.#wake.wake();
    };
    if (signal?.aborted) now();
    signal?.addEventListener("abort", now, { once: true });
    this.#wake.wake();
    try {
      await this.#loop;
      while (this.#running.size > 0) await Promise.all(this.#running);
      await this.#finishes.drain();
    } finally {
      signal?.removeEventListener("abort", now);
      this.#errors.clear();
    }
  }

  async #claimLoop(): Promise<void> {
    const max = this.#parts.options.concurrency;
    while (this.#stopping !== "now") {
      const room = max - this.#running.size;
      if (this.#more && room > 0) {
        // A death committed while the claim is in flight sets it again.
        this.#more = false;
        if ((await this.#claim(room)) === room) this.#more = true;
        if (this.#stopping === "when-empty" && !this.#more) return;
        continue;
      }
      if (this.#stopping === "when-empty" && !this.#more) return;
      await this.#idle();
    }
  }

  /** Waits for a death, a freed slot (when more may be waiting), the stop, or the poll interval. */
  async #idle(): Promise<void> {
    const { woken, cancel } = this.#wake.waiter();
    const timer = new AbortController();
    const polled = this.#parts.options.clock.sleep(DEAD_HOOK_POLL_MS, timer.signal).then(() => {
      if (!timer.signal.aborted) this.#more = true;
    });
    await Promise.race([woken, polled]);
    cancel();
    timer.abort();
  }

  /** Claims up to `room` deaths and starts their hooks; returns how many it claimed (0 when the store failed). */
  async #claim(room: number): Promise<number> {
    const { store, queue, workerId, log } = this.#parts;
    let claims: readonly DeadHookClaim[];
    try {
      claims = await store.claimDeadHooks({ queue, workerId, limit: room, leaseMs: this.#leaseMs });
    } catch (thrown) {
      log.warn(`Could not look for onDead hooks to run: ${coerceError(thrown).message}; looking again in ${DEAD_HOOK_POLL_MS / 1_000} s`, { queue, workerId });
      return 0;
    }
    for (const claim of claims) {
      const running: Promise<void> = this.#run(claim).finally(() => {
        this.#running.delete(running);
        if (this.#more) this.#wake.wake();
      });
      this.#running.add(running);
    }
    return claims.length;
  }

  /** Calls the hook for one claimed death (never rejects), then records it done. */
  async #run(claim: DeadHookClaim): Promise<void> {
    const key = deathKey(claim.jobId, claim.attempt);
    const thrown = this.#errors.get(key);
    const live = this.#errors.has(key);
    this.#errors.delete(key);
    const { job } = claim;
    if (job === undefined) {
      this.#parts.log.warn(`Job ${claim.jobId} was deleted before its onDead hook ran; the hook is skipped`, { jobId: claim.jobId, queue: this.#parts.queue });
    } else {
      await this.#call(job, claim, live ? coerceError(thrown) : new RecordedError(claim.errorCode, claim.lastError));
    }
    await this.#finish(claim);
  }

  async #call(job: JobRecord, claim: DeadHookClaim, error: Error): Promise<void> {
    const { clock, onDeadTimeoutMs } = this.#parts.options;
    const abort = new AbortController();
    const ctx: DeadJobContext = {
      workerId: this.#parts.workerId,
      attempt: claim.attempt,
      diedAt: claim.diedAt,
      delivery: claim.delivery,
      signal: abort.signal,
      log: redactingLogger(this.#parts.log.child({ jobId: job.id, attempt: claim.attempt }), secretValuesOf(job.payload, this.#parts.secretFields)),
    };
    const started = clock.now();
    const timer = new AbortController();
    const timeout = new HookError(`onDead did not settle within ${onDeadTimeoutMs} ms (onDeadTimeoutMs)`);
    const timedOut = clock.sleep(onDeadTimeoutMs, timer.signal).then(() => {
      if (!timer.signal.aborted) throw timeout;
    });
    try {
      await Promise.race([Promise.resolve().then(() => this.#parts.hook(job, error, ctx)), timedOut]);
    } catch (failure) {
      const reason = coerceError(failure);
      if (reason === timeout) abort.abort(timeout);
      this.#parts.events.onDeadFailed(job, claim.attempt, {
        error: reason,
        timedOut: reason === timeout,
        delivery: claim.delivery,
        durationMs: clock.now() - started,
      });
    } finally {
      timer.abort();
    }
  }

  /** Records the hook done; a claim another worker took over, or a write that failed, is logged. */
  async #finish(claim: DeadHookClaim): Promise<void> {
    const fields = { jobId: claim.jobId, attempt: claim.attempt, queue: this.#parts.queue, workerId: this.#parts.workerId };
    try {
      const result = await this.#finishes.write({ id: claim.jobId, attempt: claim.attempt });
      if (result === "fence-missed") {
        this.#parts.log.warn(`The onDead claim of job ${claim.jobId} lapsed before it was recorded as done; another worker may call the hook again`, fields);
      }
    } catch (thrown) {
      this.#parts.log.error(
        `Could not record the onDead hook of job ${claim.jobId} as done: ${coerceError(thrown).message}; another worker calls it again once the claim lapses`,
        fields,
      );
    }
  }
}

function deathKey(jobId: string, attempt: number): string {
  return `${jobId}:${attempt}`;
}
