import { ConfigError } from "../../errors/config-errors";
import type { ClaimedJob } from "../../job/job-record";
import { checkNewJob } from "../../store/check-new-job";
import { CheckedJobStore } from "../../store/checked-job-store";
import type {
  FireDueSchedulesParams,
  RemoveScheduleParams,
  ScheduleFire,
  ScheduleRecord,
  ScheduleStore,
  SyncSchedulesParams,
  SyncSchedulesResult,
  UpsertScheduleParams,
  UpsertScheduleResult,
} from "../../store/schedule-store";
import { systemClock, type Clock } from "../../time/clock";
import { rejectUnknownOptions } from "../../validation/option-checks";
import { memoryJobStore } from "./memory-job-calls";
import { fireDueSchedules, listSchedules, removeSchedule, syncSchedules, upsertSchedule } from "./memory-schedules";
import { startJob, type StartJobParams } from "./memory-start-job";
import { MemoryState } from "./memory-state";
import { inTransaction, type MemoryTransaction } from "./memory-transaction";

/** Options of {@link InMemoryJobStore}. */
export interface InMemoryJobStoreOptions {
  /**
   * The store's clock, what PostgreSQL's `now()` is to the PostgreSQL
   * store: leases, `run_at`, finish times, the rate limits' buckets and the
   * retention cutoffs all read it. Give a worker the same `ManualClock` to
   * move both through time. Default: the system clock.
   */
  readonly clock?: Clock;
  /**
   * Largest payload the store takes, in bytes of UTF-8 JSON, as the
   * PostgreSQL store's option of that name. Default 1 MiB.
   */
  readonly maxPayloadBytes?: number;
}

/**
 * A `JobStore` that keeps everything in memory, for tests that need no
 * database. It behaves as the PostgreSQL store does and passes the same
 * conformance suite (`describeJobStoreConformance`): claim order (priority,
 * then `run_at`, then id), limits, leases and their expiry on the store's
 * clock, the owner and attempt fence on every write after a claim, dedupe
 * keys (keep, replace, debounce), batch and transactional enqueue, the
 * queue controls (pause, running cap, rate limit) applied at claim, groups
 * (turns and even shares, the per-group cap) and serial lines (one job at
 * a time, held by a dead job until retried or released), counts
 * and gauges, listing, retention, bulk retry, effects run once per key,
 * attempt history, meta and progress, the pending `onDead` hook of
 * every death, and workflows (steps blocked until the steps they wait for
 * succeeded, a failure cancelling the steps after it, retries resuming,
 * steps added by a running step with its success). It is a `ScheduleStore` too, and passes that conformance
 * suite (`describeScheduleStoreConformance`): declared schedules expiring
 * on its clock after the grace, runtime ones, and fires once per dedupe key.
 *
 * Its transaction (`Tx`) is a {@link MemoryTransaction}: a unit of work
 * whose writes apply when it commits. Every call runs to completion
 * without yielding, so it is atomic as one statement is. It is a
 * `CheckedJobStore`, as the PostgreSQL store is: every call's arguments are
 * checked, with the same errors, before the store sees them.
 *
 * @example
 * ```ts
 * const clock = new ManualClock();
 * const store = new InMemoryJobStore({ clock });
 * const worker = new SendInvoiceWorker(store, createSilentLogger(), { clock });
 * await new JobClient(store).enqueue(SendInvoice, { invoiceId: 812 });
 * const summary = await worker.start(); // drains the queue
 * ```
 */
export class InMemoryJobStore extends CheckedJobStore<MemoryTransaction> implements ScheduleStore {
  readonly #state: MemoryState;

  constructor(options: InMemoryJobStoreOptions = {}) {
    const state = memoryState(options);
    super(memoryJobStore(state), { maxPayloadBytes: options.maxPayloadBytes });
    this.#state = state;
  }

  /** The clock the store reads. */
  get clock(): Clock {
    return this.#state.clock;
  }

  /**
   * Runs `work` in a transaction of this store: commits when it resolves,
   * rolls back (every write made through it dropped) and rethrows when it
   * throws. Pass the transaction to `enqueue` (or as the `transaction`
   * enqueue option) and the job exists if and only if it commits.
   *
   * @example
   * ```ts
   * await store.transaction((trx) => client.enqueue(SendInvoice, { invoiceId: 812 }, { transaction: trx }));
   * ```
   */
  async transaction<T>(work: (transaction: MemoryTransaction) => Promise<T>): Promise<T> {
    if (typeof work !== "function") throw new ConfigError("work", "must be a function");
    return (await inTransaction(work)).value;
  }

  /**
   * Inserts a job and claims it at once for `workerId` as attempt
   * `attempt` (the attempts before it counted, none of them in the
   * history), whatever else the queue holds and whatever its controls say:
   * a test's way to put one attempt in a given state (`runJob` uses it).
   *
   * @example
   * ```ts
   * const job = await store.startJob({ job: buildNewJob(SendInvoice, { invoiceId: 812 }), workerId: "w1", leaseMs: 60_000, attempt: 3 });
   * ```
   */
  async startJob(params: StartJobParams): Promise<ClaimedJob> {
    checkNewJob(params.job, this.maxPayloadBytes);
    return startJob(this.#state, params);
  }

  async syncSchedules(params: SyncSchedulesParams): Promise<SyncSchedulesResult> {
    return syncSchedules(this.#state, params);
  }

  async upsertSchedule(params: UpsertScheduleParams): Promise<UpsertScheduleResult> {
    return upsertSchedule(this.#state, params);
  }

  async removeSchedule(params: RemoveScheduleParams): Promise<ScheduleRecord | undefined> {
    return removeSchedule(this.#state, params.name);
  }

  async listSchedules(): Promise<readonly ScheduleRecord[]> {
    return listSchedules(this.#state);
  }

  async fireDueSchedules(params: FireDueSchedulesParams): Promise<readonly ScheduleFire[]> {
    return fireDueSchedules(this.#state, params);
  }
}

/** The state of a new store, from its checked options. */
function memoryState(options: InMemoryJobStoreOptions): MemoryState {
  if (typeof options !== "object" || options === null) throw new ConfigError("options", "must be an object");
  rejectUnknownOptions("options", options, ["clock", "maxPayloadBytes"]);
  const clock = options.clock ?? systemClock;
  if (typeof clock?.now !== "function" || typeof clock.sleep !== "function") throw new ConfigError("clock", "must be a Clock (now and sleep)");
  return new MemoryState(clock);
}
