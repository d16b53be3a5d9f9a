import {
  AbstractQueueWorker,
  errorCodeOf,
  PermanentError,
  type BatchContext,
  type BatchEntry,
  JOB_STORE,
  LOGGER,
  type DeadJobContext,
  type JobContext,
  type JobRecord,
  type JobStore,
  type Logger,
} from "@stint/core";
import { sql, type Kysely } from "kysely";
import { inject, injectable, type InjectionToken } from "tsyringe";
import { ProbeJob, parseProbe, type Probe } from "./probe-job";

/** How the probe worker behaves. */
export interface ProbeSettings {
  readonly concurrency: number;
  /** Jobs claimed ahead of free slots; default the worker's adaptive buffer. */
  readonly prefetch?: number;
  readonly leaseMs: number;
  /** Jobs per `processBatch` call (see {@link ProbeWorker.processBatch}); default 1, no batches. */
  readonly batchSize?: number;
  /** Each job waits this long (or until its signal aborts). 0: a no-op job. */
  readonly sleepMs: number;
  /** Each `onDead` call waits this long before it records itself (or until its signal aborts). Default 0. */
  readonly deadHookSleepMs?: number;
  /**
   * Record every handler run in `<schema>.executions` on this database (its
   * start, `at`, and its end, `done_at`), and every `onDead` call in
   * `<schema>.dead_hook_calls`. The workflow steps' worker records its
   * runs in the same table (see `StepProbeWorker`).
   */
  readonly executions?: { readonly db: Kysely<any>; readonly schema: string };
}

/** Token of the {@link ProbeSettings}. */
export const PROBE_SETTINGS: InjectionToken<ProbeSettings> = Symbol.for("stint.process-tests.ProbeSettings");

/**
 * Runs probe jobs: the unit of work of the benchmarks and the multi-process
 * tests. It can wait (`sleepMs`, honouring its signal) and record each
 * handler run and every `onDead` call on its own autocommit connection, so
 * a test can prove that every job ran, and every dead job's hook was
 * called, exactly once.
 */
@injectable()
export class ProbeWorker extends AbstractQueueWorker<Probe> {
  readonly job = ProbeJob;
  readonly #settings: ProbeSettings;

  constructor(@inject(JOB_STORE) store: JobStore, @inject(LOGGER) log: Logger, @inject(PROBE_SETTINGS) settings: ProbeSettings) {
    super(store, log, {
      ...probeWorkerOptions(settings),
      ...(settings.batchSize === undefined ? {} : { batchSize: settings.batchSize }),
    });
    this.#settings = settings;
  }

  protected parse(payload: unknown): Probe {
    return parseProbe(payload);
  }

  protected async processItem(item: Probe, ctx: JobContext): Promise<void> {
    const { executions, sleepMs } = this.#settings;
    if (executions !== undefined) {
      await sql`insert into ${sql.id(executions.schema, "executions")} (job_id, seq, attempt, worker_id)
                values (${ctx.job.id}, ${item.seq}, ${ctx.job.attempt}, ${ctx.workerId})`.execute(executions.db);
    }
    if (item.fail === "permanent") throw new PermanentError(`probe ${item.seq} asked to fail for good`);
    if (item.fail === "retry-once" && ctx.job.attempt === 1) throw new Error(`probe ${item.seq} asked to fail once`);
    if (sleepMs > 0) await waitOrAbort(sleepMs, ctx.signal);
    await this.#done(ctx.job.id, ctx.job.attempt);
  }

  /**
   * Batch mode: records the start of every job of the batch (with the
   * batch's size), settles each job that is not `slow` at once — failed as
   * its `fail` asks, else done and succeeded — then waits `sleepMs` (or
   * until the batch's signal aborts) and lets the return settle the slow ones.
   */
  protected override async processBatch(entries: readonly BatchEntry<Probe>[], ctx: BatchContext<Probe>): Promise<void> {
    const { executions, sleepMs } = this.#settings;
    if (executions !== undefined) {
      const rows = entries.map(({ job, item }) => ({
        job_id: job.id,
        seq: item.seq,
        attempt: job.attempt,
        worker_id: ctx.workerId,
        batch_size: entries.length,
      }));
      await executions.db.insertInto(`${executions.schema}.executions`).values(rows).execute();
    }
    const slow = entries.filter((entry) => entry.item.slow === true);
    for (const entry of entries) {
      const { fail } = entry.item;
      if (fail === "permanent") ctx.fail(entry, new PermanentError(`probe ${entry.item.seq} asked to fail for good`));
      else if (fail === "retry-once" && entry.job.attempt === 1) ctx.fail(entry, new Error(`probe ${entry.item.seq} asked to fail once`));
      else if (entry.item.slow !== true) {
        await this.#done(entry.job.id, entry.job.attempt);
        ctx.succeed(entry);
      }
    }
    if (slow.length === 0) return;
    if (sleepMs > 0) await waitOrAbort(sleepMs, ctx.signal);
    for (const entry of slow) await this.#done(entry.job.id, entry.job.attempt);
  }

  async #done(jobId: string, attempt: number): Promise<void> {
    const { executions } = this.#settings;
    if (executions === undefined) return;
    await sql`update ${sql.id(executions.schema, "executions")} set done_at = clock_timestamp()
               where job_id = ${jobId} and attempt = ${attempt}`.execute(executions.db);
  }

  protected override async onDead(job: JobRecord, error: Error, ctx: DeadJobContext): Promise<void> {
    const { executions } = this.#settings;
    if (executions === undefined) return;
    const { deadHookSleepMs = 0 } = this.#settings;
    if (deadHookSleepMs > 0) await waitOrAbort(deadHookSleepMs, ctx.signal);
    await sql`insert into ${sql.id(executions.schema, "dead_hook_calls")} (job_id, attempt, delivery, worker_id, error_code, error_message)
              values (${job.id}, ${ctx.attempt}, ${ctx.delivery}, ${ctx.workerId}, ${errorCodeOf(error) ?? null}, ${error.message})`.execute(executions.db);
  }
}

/** The worker options the probe workers share: slots, prefetch, lease, and a short backoff. */
export function probeWorkerOptions(settings: ProbeSettings): {
  concurrency: number;
  prefetch?: number;
  leaseMs: number;
  backoff: { baseMs: number; maxMs: number };
} {
  return {
    concurrency: settings.concurrency,
    ...(settings.prefetch === undefined ? {} : { prefetch: settings.prefetch }),
    leaseMs: settings.leaseMs,
    backoff: { baseMs: 100, maxMs: 1_000 },
  };
}

/** Creates the tables a {@link ProbeWorker} records executions and `onDead` calls in. */
export async function createExecutionsTable(db: Kysely<any>, schema: string): Promise<void> {
  await sql`create table if not exists ${sql.id(schema, "executions")} (
              job_id bigint not null, seq int not null, attempt int not null, worker_id text not null,
              at timestamptz not null default clock_timestamp(), done_at timestamptz, batch_size int,
              ended_how text, dependency_seqs int[])`.execute(db);
  await sql`create table if not exists ${sql.id(schema, "dead_hook_calls")} (
              job_id bigint not null, attempt int not null, delivery int not null, worker_id text not null,
              error_code text, error_message text not null, at timestamptz not null default clock_timestamp())`.execute(db);
}

/** Waits `ms`, or rejects with `signal`'s reason when it aborts first. */
export function waitOrAbort(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener(
      "abort",
      () => {
        clearTimeout(timer);
        reject(signal.reason);
      },
      { once: true },
    );
  });
}
