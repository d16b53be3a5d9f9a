import assert from "node:assert/strict";
import type { ClaimedJob } from "../../job/job-record";
import type { JobStore, NewJob } from "../../store/job-store";
import type { ScheduleStore } from "../../store/schedule-store";

/**
 * What a store under test provides to the conformance suite: the store
 * itself plus the few things the suite cannot do through `JobStore`.
 *
 * @example
 * ```ts
 * const harness: JobStoreHarness<MemoryTransaction> = {
 *   store,
 *   withTransaction: (work) => store.transaction(work),
 *   waitUntilPast: (instant) => clock.set(Math.max(clock.now(), instant.getTime() + 1)),
 *   now: () => clock.now(),
 *   close: async () => undefined,
 * };
 * ```
 */
export interface JobStoreHarness<Tx> {
  /** A store over fresh, empty storage, able to serve at least 16 concurrent calls. */
  readonly store: JobStore<Tx>;
  /** Runs `work` in a transaction of the backend: commits when it resolves, rolls back when it throws. */
  withTransaction<T>(work: (transaction: Tx) => Promise<T>): Promise<T>;
  /**
   * Resolves once the store's clock (the database's `now()`) is past
   * `instant`: by polling the database's clock, or, for a store whose clock
   * a test controls, by moving it.
   */
  waitUntilPast(instant: Date): Promise<void>;
  /**
   * The store's time in milliseconds since the epoch, for the tests that
   * date jobs relative to it. Default `Date.now()` (a database on the same
   * machine); a store with a `ManualClock` gives the clock's.
   */
  now?(): number;
  /** Releases the storage. */
  close(): Promise<void>;
}

/** Builds a harness over fresh storage; called once per suite. */
export type JobStoreHarnessFactory<Tx> = () => Promise<JobStoreHarness<Tx>>;

/**
 * What a store under test provides to the schedule conformance suite: a
 * `JobStoreHarness` whose store is also a `ScheduleStore`, and a way to let
 * time pass for the stored schedules.
 *
 * @example
 * ```ts
 * const harness: ScheduleStoreHarness<MemoryTransaction> = {
 *   ...jobStoreHarness,
 *   passScheduleTime: (ms) => clock.advance(ms),
 * };
 * ```
 */
export interface ScheduleStoreHarness<Tx> extends JobStoreHarness<Tx> {
  readonly store: JobStore<Tx> & ScheduleStore;
  /**
   * Lets `ms` pass for every stored schedule, as if no process declared or
   * fired one meanwhile: by moving the store's clock, or, for a database
   * whose clock cannot move, by moving each schedule's stored times
   * (declared, next run, last fire, last change) `ms` into the past.
   */
  passScheduleTime(ms: number): Promise<void>;
}

/** Builds a schedule store harness over fresh storage; called once per suite. */
export type ScheduleStoreHarnessFactory<Tx> = () => Promise<ScheduleStoreHarness<Tx>>;

/** Gives the suites access to the harness created in the `before` hook. */
export interface ConformanceContext<Tx> {
  harness(): JobStoreHarness<Tx>;
  store(): JobStore<Tx>;
  /** A queue name no other test uses, so tests share storage without seeing each other. */
  freshQueue(): string;
  /** The store's time (see {@link JobStoreHarness.now}). */
  now(): number;
}

/**
 * A `NewJob` for a store's own tests: `payload` as JSON, no delay, no
 * dedupe key, three attempts, priority 0, and whatever `overrides` says.
 *
 * @example
 * ```ts
 * await store.enqueue(newJob("send-invoice", { invoiceId: 812 }, { dedupeKey: "invoice:812" }));
 * ```
 */
export function newJob(queue: string, payload: unknown, overrides: Partial<NewJob> = {}): NewJob {
  return {
    queue,
    payloadJson: JSON.stringify(payload),
    priority: 0,
    maxAttempts: 3,
    timeoutMs: null,
    runAt: null,
    delayMs: 0,
    dedupeKey: null,
    ...overrides,
  };
}

/** Claims one job of `queue` as `workerId`, failing the test if there is none. */
export async function claimOne<Tx>(store: JobStore<Tx>, queue: string, workerId: string, leaseMs = 60_000): Promise<ClaimedJob> {
  const [job, ...rest] = await store.claimBatch({ queue, workerId, limit: 1, leaseMs });
  assert.equal(rest.length, 0);
  if (job === undefined) throw new Error(`expected a due job in queue ${queue}`);
  return job;
}

/** Waits until the leases of the given jobs have expired on the store's clock. */
export async function waitForLeaseExpiry<Tx>(harness: JobStoreHarness<Tx>, ids: readonly string[]): Promise<void> {
  let latest = 0;
  for (const id of ids) {
    const job = await harness.store.getJob({ id });
    if (job?.lockedUntil == null) throw new Error(`job ${id} holds no lease`);
    latest = Math.max(latest, job.lockedUntil.getTime());
  }
  // lockedUntil is rounded down to the millisecond; wait one more to be past the stored microseconds.
  await harness.waitUntilPast(new Date(latest + 1));
}

/** Claims a job with a 1 ms lease and waits until that lease has expired. */
export async function claimAndAbandon<Tx>(harness: JobStoreHarness<Tx>, queue: string, workerId: string): Promise<ClaimedJob> {
  const job = await claimOne(harness.store, queue, workerId, 1);
  await waitForLeaseExpiry(harness, [job.id]);
  return job;
}

/**
 * The promise's rejection, failing the test if it resolved.
 *
 * @example
 * ```ts
 * const error = await rejectionOf(store.retryJob({ id }));
 * assert.match(error.message, /dedupe key/);
 * ```
 */
export async function rejectionOf(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (thrown) {
    return thrown as Error;
  }
  throw new Error("expected the promise to reject");
}
