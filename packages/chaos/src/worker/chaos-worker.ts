import { existsSync } from "node:fs";
import { AbstractQueueWorker, errorCodeOf, JOB_STORE, LOGGER, type BackoffOptions, type JobContext, type JobStore, type Logger } from "@stint/core";
import { sql, type Transaction } from "kysely";
import { inject, injectable, type InjectionToken } from "tsyringe";
import { ChaosJob, parseChaosTask, type ChaosTask } from "./chaos-job";
import type { OracleWriter } from "./oracle-writer";

/** How a chaos worker runs, as the harness sets it for a scenario. */
export interface ChaosWorkerSettings {
  readonly concurrency: number;
  /** Jobs claimed ahead of free handler slots; the worker's default when unset. */
  readonly prefetch?: number;
  readonly leaseMs: number;
  readonly backoff?: Partial<BackoffOptions>;
  readonly shutdownTimeoutMs?: number;
  /**
   * Claims wait for their flush (`WorkerOptions.durableClaims`); the
   * worker's default when unset. Scenarios about the lease, the fence or
   * the caps set it: a claim not yet on disk is given up at the first
   * heartbeat unanswered within `leaseMs / 6`, which a loaded CI machine
   * sometimes takes for a crash, and claims lost to a crash are scenario 3's.
   */
  readonly durableClaims?: boolean;
  /**
   * A `block` action keeps blocking after its `ms` until this file exists
   * (checked synchronously, at most 60 s more): the harness creates it once
   * another worker has taken the job, whatever the machine's speed.
   */
  readonly releaseFile?: string;
}

/** What the worker needs besides the store and the logger. */
export interface ChaosWorkerDeps {
  readonly settings: ChaosWorkerSettings;
  readonly oracle: OracleWriter;
  /** The scenario's schema, where the effect and ledger tables are. */
  readonly schema: string;
}

/** Token of the {@link ChaosWorkerDeps}. */
export const CHAOS_WORKER_DEPS: InjectionToken<ChaosWorkerDeps> = Symbol.for("stint.chaos.ChaosWorkerDeps");

/** What a chaos job stores as its result: who finished it. */
export interface ChaosResult {
  readonly by: string;
  readonly attempt: number;
}

/**
 * The worker of the chaos suite. Every handler run first records itself in
 * the oracle (a separate autocommit connection), then does what its
 * payload's `action` says — sleep, block the event loop, ignore its signal,
 * kill its own process, fail, make an effect through `ctx.once`, or write
 * and complete in one `ctx.transaction`.
 */
@injectable()
export class ChaosWorker extends AbstractQueueWorker<ChaosTask> {
  readonly job = ChaosJob;
  readonly #deps: ChaosWorkerDeps;

  constructor(@inject(JOB_STORE) store: JobStore, @inject(LOGGER) log: Logger, @inject(CHAOS_WORKER_DEPS) deps: ChaosWorkerDeps) {
    const { concurrency, prefetch, leaseMs, backoff, shutdownTimeoutMs, durableClaims } = deps.settings;
    super(store, log, {
      concurrency,
      leaseMs,
      ...(prefetch === undefined ? {} : { prefetch }),
      ...(durableClaims === undefined ? {} : { durableClaims }),
      ...(backoff === undefined ? {} : { backoff }),
      ...(shutdownTimeoutMs === undefined ? {} : { shutdownTimeoutMs }),
    });
    this.#deps = deps;
  }

  protected parse(payload: unknown): ChaosTask {
    return parseChaosTask(payload);
  }

  protected async processItem(task: ChaosTask, ctx: JobContext): Promise<ChaosResult> {
    const { oracle, schema } = this.#deps;
    const run = { jobId: ctx.job.id, seq: task.seq, attempt: ctx.job.attempt, workerId: ctx.workerId, action: task.action };
    const token = await oracle.recordStart(run);
    const ms = ctx.job.attempt === 1 && task.firstMs !== undefined ? task.firstMs : task.ms;
    const result: ChaosResult = { by: ctx.workerId, attempt: ctx.job.attempt };
    switch (task.action) {
      case "sleep":
        await sleep(ms, ctx.signal);
        return result;
      case "sleep-timed":
        await timed(sleep(ms, ctx.signal), ctx.signal, (at, how) => oracle.recordEnd(token, at, how));
        return result;
      case "block":
        busyWait(ms);
        blockUntilExists(this.#deps.settings.releaseFile);
        return result;
      case "ignore-signal":
        await sleep(ms);
        return result;
      case "kill-self":
        process.kill(process.pid, "SIGKILL");
        await sleep(60_000, ctx.signal);
        return result;
      case "fail":
        await sleep(ms, ctx.signal);
        throw new Error(`chaos job ${task.seq} fails on every attempt (attempt ${ctx.job.attempt})`);
      case "effect":
        await sleep(ms / 2, ctx.signal);
        await ctx.once(`chaos-effect:${task.seq}`, async (trx: Transaction<any>) => {
          await oracle.recordEffectRun(run);
          await sql`INSERT INTO ${sql.id(schema, "chaos_effects")} (seq, job_id, attempt, worker_id)
                    VALUES (${task.seq}, ${ctx.job.id}, ${ctx.job.attempt}, ${ctx.workerId})`.execute(trx);
          return { seq: task.seq };
        });
        await sleep(ms / 2, ctx.signal);
        return result;
      case "transaction":
        await sleep(ms, ctx.signal);
        return ctx.transaction(async (trx: Transaction<any>) => {
          await sql`INSERT INTO ${sql.id(schema, "chaos_ledger")} (seq, job_id, attempt, worker_id)
                    VALUES (${task.seq}, ${ctx.job.id}, ${ctx.job.attempt}, ${ctx.workerId})`.execute(trx);
          return result;
        });
    }
  }
}

/**
 * Settles like `work`, and reports the local time `work` ended and how:
 * `done`, or the code of the abort `signal` saw (the moment it aborted, not
 * the moment the rejection got here). The report is written before `work`'s
 * outcome passes on.
 */
async function timed(work: Promise<void>, signal: AbortSignal, report: (at: number, how: string) => Promise<void>): Promise<void> {
  let abortedAt: number | undefined;
  const onAbort = (): void => {
    abortedAt = Date.now();
  };
  signal.addEventListener("abort", onAbort, { once: true });
  try {
    await work;
    await report(Date.now(), "done");
  } catch (thrown) {
    await report(abortedAt ?? Date.now(), signal.aborted ? `aborted:${errorCodeOf(signal.reason) ?? "unknown"}` : "failed");
    throw thrown;
  } finally {
    signal.removeEventListener("abort", onAbort);
  }
}

/** Waits `ms`; with a signal, rejects with its reason when it aborts. */
function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/** Keeps the event loop busy until `file` exists (at most 60 s); returns at once without one. */
function blockUntilExists(file: string | undefined): void {
  const until = Date.now() + 60_000;
  while (file !== undefined && !existsSync(file) && Date.now() < until) busyWait(10);
}

/** Keeps the event loop busy for `ms`: no timer, no heartbeat, no I/O runs meanwhile. */
function busyWait(ms: number): void {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    // spin
  }
}
