import { coerceError } from "../errors/coerce-error";
import type { AnyQueueWorker } from "../di/register-core";
import type { Logger } from "../logging/logger";
import { JobExpirer } from "../maintenance/job-expirer";
import { LeaseRescuer } from "../maintenance/lease-rescuer";
import { MaintenanceLoop } from "../maintenance/maintenance-loop";
import { RetentionPruner, type RetentionOptions } from "../maintenance/retention-pruner";
import { ScheduleDeclarer } from "../maintenance/schedule-declarer";
import { ScheduleTicker } from "../maintenance/schedule-ticker";
import type { MaintenanceService } from "../maintenance/maintenance-service";
import type { ScheduleDefinition } from "../schedule/define-schedule";
import { checkScheduleGrace } from "../schedule/schedule-grace";
import type { JobStore } from "../store/job-store";
import type { ScheduleStore } from "../store/schedule-store";
import { systemClock } from "../time/clock";
import type { RunOptions } from "../worker/run-options";
import { DrainGroup } from "../worker/drain-group";
import { failureStopReason, type RunSummary } from "../worker/run-summary";
import { WorkerEvents } from "../events/worker-events";
import { startRunMetrics, type MetricsOptions } from "../metrics/run-metrics";
import type { LeaderLock, WakeupSource } from "./coordination";
import { startHealthServer } from "./health-server";
import { summarizeRun, type RunReport } from "./run-report";

/** Options of {@link runWorkers}. */
export interface RunWorkersOptions {
  readonly workers: readonly AnyQueueWorker[];
  /** `once`: drain and exit (a CronJob). `loop`: run until stopped (a Deployment). */
  readonly mode: "once" | "loop";
  readonly store: JobStore;
  readonly log: Logger;
  /** Graceful stop (see `handleStopSignals`). */
  readonly signal?: AbortSignal;
  /** Once mode: stop claiming after this long; never claim a job whose timeout does not fit. */
  readonly maxRuntimeMs?: number;
  /** Once mode: claim at most this many jobs per queue. */
  readonly maxJobs?: number;
  /** Overrides the workers' `shutdownTimeoutMs`. */
  readonly shutdownTimeoutMs?: number;
  /**
   * Periodic schedules: `definitions` (the code's) are declared at start
   * and, in loop mode, again every hour (a quarter of `graceMs` when that
   * is shorter) by every process; the due fires of every live schedule are
   * enqueued once at start in once mode, by the leader in loop mode. A
   * schedule the code stopped declaring fires until no process has declared
   * it for `graceMs` (a minute to a year; default a day).
   */
  readonly schedules?: { readonly store: ScheduleStore; readonly definitions: readonly ScheduleDefinition[]; readonly graceMs?: number };
  /** Loop mode: wake-ups so new jobs start within milliseconds of their commit. */
  readonly wakeups?: WakeupSource;
  /** Loop mode: the lock that elects the one process running maintenance. Without it, no maintenance runs. */
  readonly leader?: LeaderLock;
  /** Loop mode: retention of finished jobs, or `false` for none. Default 7 days / 30 days for dead. */
  readonly retention?: RetentionOptions | false;
  /** Loop mode: serve `/healthz` and `/readyz` on this port. */
  readonly healthPort?: number;
  /** Loop mode: longest idle poll interval in ms. Default 2,000. */
  readonly pollIntervalMs?: number;
  /** Hears the events of every worker of the run (besides each worker's own `worker.events`). */
  readonly events?: WorkerEvents;
  /**
   * Prometheus metrics (see `docs/metrics.md`). Default: on when the run
   * serves health probes (`healthPort`), at `/metrics`; `false`: off (no
   * subscriber, no route); an object: on, in `registry` when given.
   */
  readonly metrics?: MetricsOptions | false;
  /**
   * Per queue, options that beat the worker's own for this run: what the
   * `STINT_*` variables and `stint run` flags set (`runFromContainer`
   * fills it in). They override `pollIntervalMs` and `shutdownTimeoutMs` above too.
   */
  readonly overrides?: Readonly<Record<string, RunOverrides>>;
}

/** What a run may set for one worker on top of its options. */
export type RunOverrides = Pick<RunOptions, "concurrency" | "prefetch" | "leaseMs" | "pollIntervalMs" | "shutdownTimeoutMs">;

/**
 * Runs workers the way a deployment runs them. **once** (a Kubernetes
 * CronJob): declares its schedules, rescues expired leases of its queues,
 * enqueues due schedules, then drains every queue concurrently until no
 * job is due in any of them (a queue whose jobs ran out waits while
 * another still runs, and looks again after each outcome it records, see
 * `DrainGroup`) or a budget is spent. **loop** (a Deployment): declares its
 * schedules at start and every hour, serves health probes, runs
 * maintenance when elected leader, and keeps every worker claiming — woken
 * by LISTEN/NOTIFY, polling as the source of truth — until the signal
 * aborts. Resolves with a report whose `exitCode` a process should exit with.
 *
 * @example
 * ```ts
 * const stop = handleStopSignals(log);
 * const events = new WorkerEvents();
 * events.on("job.dead", (event) => alert(`${event.queue} job ${event.jobId} is dead: ${event.error.message}`));
 * const report = await runWorkers({ workers, mode: "once", store, log, maxRuntimeMs: 240_000, signal: stop.signal, events });
 * console.log(JSON.stringify(report));
 * process.exitCode = report.exitCode;
 * ```
 */
export async function runWorkers(options: RunWorkersOptions): Promise<RunReport> {
  const started = Date.now();
  const queues = options.workers.map((worker) => worker.queue);
  const schedules = scheduleServices(options);
  const metrics = metricsOf(options);
  if (metrics !== undefined) options = { ...options, events: metrics.events };
  const preparation = await prepare(options, queues, schedules);
  let summaries: RunSummary[];
  try {
    summaries = options.mode === "once" ? await runOnce(options) : await runLoop(options, queues, schedules, metrics);
  } finally {
    metrics?.stop();
  }
  return summarizeRun({ mode: options.mode, summaries, durationMs: Date.now() - started, ...preparation });
}

/** The run's schedule duties: the declarer of its code's schedules, and the ticker that fires the live ones. */
interface ScheduleServices {
  readonly declarer: ScheduleDeclarer;
  readonly ticker: ScheduleTicker;
}

/** Built before anything starts, so a bad `graceMs` throws a `ConfigError` naming it. */
function scheduleServices(options: RunWorkersOptions): ScheduleServices | undefined {
  if (options.schedules === undefined) return undefined;
  const { store, definitions, graceMs } = options.schedules;
  const grace = graceMs === undefined ? {} : { graceMs: checkScheduleGrace("schedules.graceMs", graceMs) };
  return {
    declarer: new ScheduleDeclarer(store, definitions, { ...grace, log: options.log }),
    ticker: new ScheduleTicker(store, { ...grace, log: options.log }),
  };
}

async function prepare(
  options: RunWorkersOptions,
  queues: readonly string[],
  schedules: ScheduleServices | undefined,
): Promise<{ readonly maintenance: readonly string[]; readonly preparationError?: string; readonly preparationFailure?: "config" | "infrastructure" }> {
  const done: string[] = [];
  try {
    await schedules?.declarer.declare();
    if (options.mode === "once") {
      done.push(await new LeaseRescuer(options.store, { queues }).runOnce());
      done.push(await new JobExpirer(options.store, { queues }).runOnce());
      if (schedules !== undefined) done.push(await schedules.ticker.runOnce());
    }
    return { maintenance: done };
  } catch (thrown) {
    const message = coerceError(thrown).message;
    options.log.error(`Could not prepare the run: ${message}`);
    return { maintenance: done, preparationError: message, preparationFailure: failureStopReason(thrown) };
  }
}

/** Drains every queue at once; with several, they end together (see `DrainGroup`): a step one queue releases in another runs in this run. */
function runOnce(options: RunWorkersOptions): Promise<RunSummary[]> {
  const together = options.workers.length > 1 ? { drainGroup: new DrainGroup() } : {};
  return Promise.all(
    options.workers.map((worker) =>
      worker.start({
        mode: "drain",
        ...pick(options, ["signal", "maxJobs", "maxRuntimeMs", "shutdownTimeoutMs", "events"]),
        ...together,
        ...options.overrides?.[worker.queue],
      }),
    ),
  );
}

/** The run's metrics, when on: they listen on the run's events hub (the caller's, or one of their own). */
function metricsOf(options: RunWorkersOptions): (ReturnType<typeof startRunMetrics> & { readonly events: WorkerEvents }) | undefined {
  const served = options.mode === "loop" && options.healthPort !== undefined;
  if (options.metrics === false || (options.metrics === undefined && !served)) return undefined;
  const events = options.events ?? new WorkerEvents({ log: options.log });
  return { ...startRunMetrics(options.metrics ?? {}, { store: options.store, log: options.log, events }), events };
}

async function runLoop(
  options: RunWorkersOptions,
  queues: readonly string[],
  schedules: ScheduleServices | undefined,
  metrics: ReturnType<typeof metricsOf>,
): Promise<RunSummary[]> {
  const stop = new AbortController();
  const relay = (): void => stop.abort();
  options.signal?.addEventListener("abort", relay, { once: true });
  const checks = { ready: () => options.store.ping(), ...(metrics === undefined ? {} : { metrics: () => metrics.render() }) };
  const health = options.healthPort === undefined ? undefined : await startHealthServer(options.healthPort, checks);
  const maintenance = options.leader === undefined ? undefined : maintenanceLoop(options, queues, schedules?.ticker).run(stop.signal);
  const declarations = schedules?.declarer.run(stop.signal);
  try {
    return await Promise.all(
      options.workers.map((worker) =>
        worker.start({
          mode: "loop",
          ...pick(options, ["signal", "wakeups", "pollIntervalMs", "shutdownTimeoutMs", "events"]),
          ...options.overrides?.[worker.queue],
        }),
      ),
    );
  } finally {
    stop.abort();
    options.signal?.removeEventListener("abort", relay);
    await maintenance;
    await declarations;
    await health?.close();
  }
}

function maintenanceLoop(options: RunWorkersOptions, queues: readonly string[], ticker: ScheduleTicker | undefined): MaintenanceLoop {
  const services: MaintenanceService[] = [new LeaseRescuer(options.store), new JobExpirer(options.store)];
  if (ticker !== undefined) services.push(ticker);
  if (options.retention !== false) services.push(new RetentionPruner(options.store, options.retention ?? {}));
  const log = options.log.child({ role: "maintenance", queues });
  return new MaintenanceLoop({ leader: options.leader!, services, log, clock: systemClock });
}

function pick<K extends keyof RunWorkersOptions>(options: RunWorkersOptions, keys: readonly K[]): Partial<Pick<RunWorkersOptions, K>> {
  const picked: Partial<Pick<RunWorkersOptions, K>> = {};
  for (const key of keys) if (options[key] !== undefined) picked[key] = options[key];
  return picked;
}
