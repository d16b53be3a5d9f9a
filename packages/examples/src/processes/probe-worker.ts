import { AbstractQueueWorker, type JobContext, type JobStore, type Logger, type WorkerOptions } from "@stint/core";
import { sql, type Kysely } from "kysely";
import { ProbeJob, parseProbe, type Probe } from "./probe-job";

/**
 * Runs probe jobs. With an `executions` table it records every handler run
 * there on its own autocommit connection, so a test can prove that each job
 * ran exactly once; without one it does nothing (a no-op job for benchmarks).
 */
export class ProbeWorker extends AbstractQueueWorker<Probe> {
  readonly job = ProbeJob;
  readonly #executions: { readonly db: Kysely<any>; readonly schema: string } | undefined;

  constructor(store: JobStore, log: Logger, options: WorkerOptions, executions?: { readonly db: Kysely<any>; readonly schema: string }) {
    super(store, log, options);
    this.#executions = executions;
  }

  protected parse(payload: unknown): Probe {
    return parseProbe(payload);
  }

  protected async processItem(item: Probe, ctx: JobContext): Promise<void> {
    if (this.#executions === undefined) return;
    const { db, schema } = this.#executions;
    await sql`insert into ${sql.id(schema, "executions")} (job_id, seq, attempt, worker_id)
              values (${ctx.job.id}, ${item.seq}, ${ctx.job.attempt}, ${ctx.workerId})`.execute(db);
  }
}

/** Creates the table a {@link ProbeWorker} records executions in. */
export async function createExecutionsTable(db: Kysely<any>, schema: string): Promise<void> {
  await sql`create table if not exists ${sql.id(schema, "executions")} (
              job_id bigint not null, seq int not null, attempt int not null, worker_id text not null,
              at timestamptz not null default clock_timestamp())`.execute(db);
}
