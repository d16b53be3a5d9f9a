import type {
  ClaimBatchParams,
  ClaimDeadHooksParams,
  CompleteInTransactionParams,
  CompleteJobsParams,
  EffectOutcome,
  ExtendLeasesParams,
  ExtendedLeases,
  FinishDeadHooksParams,
  MarkJobsDeadParams,
  RunEffectOnceParams,
  ScheduleRetriesParams,
  TransactionalCompletion,
} from "./store-params";
import type { ClaimedBatch } from "../queue/queue-controls";
import type { DeadHookClaim } from "./dead-hook-claim";
import type { JobLogAppend, MetaUpdate, ProgressWrite, StoreTransaction } from "./job-store";

/**
 * The calls a worker makes for the attempts it runs: claiming batches,
 * keeping their leases, recording each outcome, a handler's progress, meta,
 * log lines and transactional work (`ctx.once`, `ctx.transaction`), and the
 * `onDead` hooks of the deaths it claims. Only a worker calls them.
 *
 * Every write after a claim is fenced on `id + workerId + attempt` and says
 * whether it applied: losing a lease is a result, not an exception.
 *
 * @example
 * ```ts
 * async function claimOne(store: WorkerStore, queue: string): Promise<string | undefined> {
 *   const [job] = await store.claimBatch({ queue, workerId: "w1", limit: 1, leaseMs: 30_000 });
 *   return job?.id;
 * }
 * ```
 */
export interface WorkerStore {
  /**
   * Claims up to `limit` due jobs of `queue` (and, unless `takeOverExpired`
   * is false, running jobs of `queue` whose lease expired), highest priority
   * first, then oldest `run_at`; returns them in that order.
   * Sets them `running`, owned by `workerId` until `now() + leaseMs`, and
   * counts the attempt. Never returns more than `limit` rows. A paused
   * queue's claim takes nothing, and its running cap and rate limit bound
   * how many it takes, however many workers claim at once; the result's
   * `hold` says when that happened.
   */
  claimBatch(params: ClaimBatchParams): Promise<ClaimedBatch>;

  /**
   * Extends the leases the worker still holds, in one call; returns the ids
   * it extended, and, of the others, those an operator cancelled while the
   * worker held them (the heartbeat stops their handlers).
   */
  extendLeases(params: ExtendLeasesParams): Promise<ExtendedLeases>;

  /** Marks many attempts succeeded in one statement; returns the ids that applied. */
  completeJobs(params: CompleteJobsParams): Promise<readonly string[]>;

  /**
   * Schedules another attempt of many jobs in one statement, each at
   * `now() + delayMs`: state `failed` with the failure recorded, or `queued`
   * when `failure` is `null` (a snooze, a shutdown release: nothing failed;
   * the previous error is kept). With `spendAttempt: false` the job gets its
   * attempt back by raising `max_attempts` by one, so `attempts` never
   * decreases. Returns the ids that applied.
   */
  scheduleRetries(params: ScheduleRetriesParams): Promise<readonly string[]>;

  /**
   * Gives up on many jobs in one statement: state `dead` with each one's
   * failure, and, in the same statement, a pending `onDead` hook for each
   * death (see `claimDeadHooks`). Returns the ids that applied.
   */
  markJobsDead(params: MarkJobsDeadParams): Promise<readonly string[]>;

  /**
   * Claims up to `limit` deaths of `queue` whose `onDead` hook has not run:
   * never claimed, or claimed by a worker whose claim lapsed (it died
   * inside the hook). Each is owned by `workerId` until `now() + leaseMs`,
   * with one more delivery counted; rows another claimer holds are skipped,
   * so two workers never get the same death while its claim holds.
   */
  claimDeadHooks(params: ClaimDeadHooksParams): Promise<readonly DeadHookClaim[]>;

  /**
   * Records the hooks of these deaths (`id` is the job's, `attempt` the
   * death's) as done, fenced on the claim: only those `workerId` still
   * holds. Returns the job ids that applied.
   */
  finishDeadHooks(params: FinishDeadHooksParams): Promise<readonly string[]>;

  /**
   * Stores a running attempt's latest progress on its job, fenced on id,
   * owner and attempt (state `running`): false when the worker no longer
   * owns the attempt, and nothing changed.
   */
  writeProgress(params: ProgressWrite): Promise<boolean>;

  /**
   * Merges `patchJson` into a running attempt's job `meta` (top-level keys
   * replace), fenced on id, owner and attempt (state `running`): false when
   * the worker no longer owns the attempt, and nothing changed. Throws
   * `PayloadError` naming the size when the merged meta would be over
   * `MAX_META_BYTES`.
   */
  updateJobMeta(params: MetaUpdate): Promise<boolean>;

  /**
   * Appends `ctx.log` lines to the running attempt's log, fenced like
   * {@link writeProgress}: false when the worker no longer owns the
   * attempt. An attempt keeps its newest `MAX_JOB_LOG_LINES` lines within
   * `MAX_JOB_LOG_BYTES`, counting the ones it drops.
   */
  appendJobLog(params: JobLogAppend): Promise<boolean>;

  /**
   * Runs `effect` at most once per `key` (for as long as the ledger keeps
   * the key; see `deleteEffectsBefore`): in one transaction it
   * records the key in the effects ledger (waiting if another transaction
   * holds it), runs `effect` with that transaction, and stores its result.
   * When the key is already recorded, `effect` is not run and the stored
   * result comes back with `ran: false`. Database writes made through the
   * transaction therefore happen exactly once; what `effect` does outside
   * it (an e-mail) happens again only if the process dies between doing it
   * and the commit.
   */
  runEffectOnce(params: RunEffectOnceParams, effect: (transaction: StoreTransaction) => Promise<unknown>): Promise<EffectOutcome>;

  /**
   * Runs `work` and marks the attempt succeeded in the same transaction,
   * fenced like `completeJobs`: if the worker no longer owns the attempt,
   * everything `work` wrote is rolled back and `applied` is false.
   */
  completeInTransaction(params: CompleteInTransactionParams, work: (transaction: StoreTransaction) => Promise<unknown>): Promise<TransactionalCompletion>;
}
