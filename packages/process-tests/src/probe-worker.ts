import {
  AbstractQueueWorker,
  errorCodeOf,
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
  /** Each job waits this long (or until its signal aborts). 0: a no-op job. */
  readonly sleepMs: number;
  /** Each `onDead` call waits this long before it records itself (or until its signal aborts). Default 0. */
  readonly deadHookSleepMs?: number;
  /**
   * Record every handler run in `<schema>.executions` on this database (its
   * start, `at`, and its end, `done_at`), and every `onDead` call in
   * `<schema>.dead_hook_calls`.
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
      concurrency: settings.concurrency,
      ...(settings.prefetch === undefined ? {} : { prefetch: settings.prefetch }),
      leaseMs: settings.leaseMs,
      backoff: { baseMs: 100, maxMs: 1_000 },
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
    if (sleepMs > 0) await waitOrAbort(sleepMs, ctx.signal);
    if (executions !== undefined) {
      await sql`update ${sql.id(executions.schema, "executions")} set done_at = clock_timestamp()
                 where job_id = ${ctx.job.id} and attempt = ${ctx.job.attempt}`.execute(executions.db);
    }
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

/** Creates the tables a {@link ProbeWorker} records executions and `onDead` calls in. */
export async function createExecutionsTable(db: Kysely<any>, schema: string): Promise<void> {
  await sql`create table if not exists ${sql.id(schema, "executions")} (
              job_id bigint not null, seq int not null, attempt int not null, worker_id text not null,
              at timestamptz not null default clock_timestamp(), done_at timestamptz)`.execute(db);
  await sql`create table if not exists ${sql.id(schema, "dead_hook_calls")} (
              job_id bigint not null, attempt int not null, delivery int not null, worker_id text not null,
              error_code text, error_message text not null, at timestamptz not null default clock_timestamp())`.execute(db);
}

function waitOrAbort(ms: number, signal: AbortSignal): Promise<void> {
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
