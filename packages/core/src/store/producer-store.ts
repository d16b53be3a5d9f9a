import type { EnqueueResult, NewJob } from "./job-store";
import type { JobCompletionSource } from "./job-completion-source";

/**
 * The calls that put jobs in a store, and the hints that tell their
 * producer a job finished: what `JobClient` (`enqueue`, `enqueueMany`,
 * `waitFor`), a handler's `ctx.enqueue` and the CLI's `stint enqueue` call.
 * A group of its own, not the operator's, because an application's request
 * path and every handler call it, inside their own transactions (`Tx`),
 * where the operator's calls (dashboard, CLI, `QueueAdmin`) never run.
 *
 * @example
 * ```ts
 * async function enqueueAll(store: ProducerStore, jobs: readonly NewJob[]): Promise<number> {
 *   return (await store.enqueueMany(jobs)).filter((result) => !result.duplicate).length;
 * }
 * ```
 */
export interface ProducerStore<Tx = unknown> {
  /**
   * Hints for waiters when a job may have finished (see `client.waitFor`);
   * without it, waiters find out by polling `getJob`. `undefined` is said
   * explicitly by a wrapper of a store that has none (a `CheckedJobStore`).
   */
  readonly completions?: JobCompletionSource | undefined;

  /** Inserts one job, or returns the active job holding its dedupe key. */
  enqueue(job: NewJob, transaction?: Tx): Promise<EnqueueResult>;

  /** Inserts many jobs in one statement; results are in input order. */
  enqueueMany(jobs: readonly NewJob[], transaction?: Tx): Promise<readonly EnqueueResult[]>;
}
