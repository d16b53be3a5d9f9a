import { AbstractQueueWorker, errorCodeOf, JOB_STORE, LOGGER, step, type JobContext, type JobStore, type Logger } from "@stint/core";
import { sql } from "kysely";
import { inject, injectable } from "tsyringe";
import { PROBE_SETTINGS, probeWorkerOptions, waitOrAbort, type ProbeSettings } from "./probe-worker";
import { parseStepProbe, StepProbeJob, type StepProbe, type StepProbeResult } from "./step-probe-job";

/**
 * Runs workflow steps in the multi-process tests. With executions recorded
 * (`RECORD_EXECUTIONS=1`), each run inserts its start into
 * `<schema>.executions` before anything else, and at its end sets `done_at`,
 * `ended_how` (`done`, or `aborted:<code>` when its signal aborted) and
 * `dependency_seqs` (the seqs `ctx.dependencies()` returned, when it read
 * them), so a test can tell when each step ran, how often, and what it saw.
 */
@injectable()
export class StepProbeWorker extends AbstractQueueWorker<StepProbe, StepProbeResult> {
  readonly job = StepProbeJob;
  readonly #settings: ProbeSettings;

  constructor(@inject(JOB_STORE) store: JobStore, @inject(LOGGER) log: Logger, @inject(PROBE_SETTINGS) settings: ProbeSettings) {
    super(store, log, probeWorkerOptions(settings));
    this.#settings = settings;
  }

  protected parse(payload: unknown): StepProbe {
    return parseStepProbe(payload);
  }

  protected async processItem(item: StepProbe, ctx: JobContext): Promise<StepProbeResult> {
    const { executions } = this.#settings;
    const table = executions === undefined ? undefined : sql.id(executions.schema, "executions");
    if (executions !== undefined) {
      await sql`insert into ${table} (job_id, seq, attempt, worker_id) values (${ctx.job.id}, ${item.seq}, ${ctx.job.attempt}, ${ctx.workerId})`.execute(
        executions.db,
      );
    }
    const end = async (how: string, seqs: readonly number[] | null): Promise<void> => {
      if (executions === undefined) return;
      await sql`update ${table} set done_at = clock_timestamp(), ended_how = ${how}, dependency_seqs = ${seqs === null ? null : `{${seqs.join(",")}}`}::int[]
                 where job_id = ${ctx.job.id} and attempt = ${ctx.job.attempt}`.execute(executions.db);
    };
    let seqs: number[] | null = null;
    try {
      if (item.readDependencies === true) seqs = (await ctx.dependencies()).results(StepProbeJob).map((result) => result.seq);
      if (item.addSteps !== undefined && item.addSteps > 0) {
        ctx.addSteps({ added: Array.from({ length: item.addSteps }, (_, index) => step(StepProbeJob, { seq: item.seq + 1 + index })) });
      }
      if (item.holdUntil !== undefined) await waitOrAbort(Math.max(0, item.holdUntil - Date.now()), ctx.signal);
    } catch (thrown) {
      await end(ctx.signal.aborted ? `aborted:${errorCodeOf(ctx.signal.reason) ?? "unknown"}` : "failed", seqs);
      throw thrown;
    }
    await end("done", seqs);
    return { seq: item.seq };
  }
}
