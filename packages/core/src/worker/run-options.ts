import { ConfigError } from "../errors/config-errors";
import type { WakeupSource } from "../runtime/coordination";
import { WorkerEvents } from "../events/worker-events";
import { integerOption, rejectUnknownOptions } from "../validation/option-checks";
import { MAX_TIMER_MS } from "../limits";
import { WORKER_OPTION_LIMITS } from "./worker-options";
import { DrainGroup } from "./drain-group";

/** Limits of one `start()`. */
export interface RunOptions {
  /** Stop claiming when it aborts; in-flight jobs get `shutdownTimeoutMs`, then are given back. */
  readonly signal?: AbortSignal;
  /** Claim at most this many jobs, then finish. */
  readonly maxJobs?: number;
  /**
   * Stop claiming after this many ms, and never claim a job whose
   * `timeoutMs` does not fit in the time left (jobs without a timeout are
   * assumed to fit). At the deadline, running jobs are treated as at shutdown.
   */
  readonly maxRuntimeMs?: number;
  /**
   * `drain` (default): return once no job is due. `loop`: wait for more —
   * woken by `wakeups` when given, and polling every `pollIntervalMs` at
   * the latest either way.
   */
  readonly mode?: "drain" | "loop";
  /** Wake-ups that end an idle wait early (loop mode). */
  readonly wakeups?: WakeupSource;
  /** Longest idle wait between polls in loop mode, in ms. Default 2,000. */
  readonly pollIntervalMs?: number;
  /** Overrides the worker's `shutdownTimeoutMs` for this run. */
  readonly shutdownTimeoutMs?: number;
  /** Overrides the worker's `concurrency` for this run (what `STINT_CONCURRENCY` and `--concurrency` set). */
  readonly concurrency?: number;
  /** Overrides the worker's `prefetch` for this run. */
  readonly prefetch?: number | "auto";
  /** Overrides the worker's `leaseMs` for this run. */
  readonly leaseMs?: number;
  /** More listeners for this run, besides `worker.events` (what `runWorkers({ events })` passes to every worker). */
  readonly events?: WorkerEvents;
  /**
   * Drain mode: runs that end together (see {@link DrainGroup}). A run of
   * the group whose queue is empty waits while another is still at work,
   * and looks again after the outcomes it records.
   */
  readonly drainGroup?: DrainGroup;
}

/** The range and default of `pollIntervalMs`, in ms. */
export const POLL_INTERVAL_LIMITS = Object.freeze({ min: 10, max: 3_600_000, default: 2_000 });

/** The worker options a run may override; they are checked with the worker's own rules when the run starts. */
export const WORKER_OVERRIDES = ["concurrency", "prefetch", "leaseMs"] as const;

const KNOWN = ["signal", "maxJobs", "maxRuntimeMs", "mode", "wakeups", "pollIntervalMs", "shutdownTimeoutMs", "events", "drainGroup", ...WORKER_OVERRIDES];

/** Checks the options of one `start()`; a bad one throws a `ConfigError` naming it. */
export function validateRunOptions(options: RunOptions): void {
  rejectUnknownOptions("start", options, KNOWN);
  if (options.maxJobs !== undefined) integerOption("maxJobs", options.maxJobs, 1, Number.MAX_SAFE_INTEGER);
  if (options.maxRuntimeMs !== undefined) integerOption("maxRuntimeMs", options.maxRuntimeMs, 1, MAX_TIMER_MS);
  if (options.shutdownTimeoutMs !== undefined) integerOption("shutdownTimeoutMs", options.shutdownTimeoutMs, 0, WORKER_OPTION_LIMITS.shutdownTimeoutMs.max);
  if (options.pollIntervalMs !== undefined) integerOption("pollIntervalMs", options.pollIntervalMs, POLL_INTERVAL_LIMITS.min, POLL_INTERVAL_LIMITS.max);
  if (options.events !== undefined && !(options.events instanceof WorkerEvents)) {
    throw new ConfigError("events", "must be a WorkerEvents (new WorkerEvents())");
  }
  if (options.mode !== undefined && options.mode !== "drain" && options.mode !== "loop") {
    throw new ConfigError("mode", `must be "drain" or "loop", got ${JSON.stringify(options.mode)}`);
  }
  if (options.drainGroup !== undefined) {
    if (!(options.drainGroup instanceof DrainGroup)) throw new ConfigError("drainGroup", "must be a DrainGroup (new DrainGroup())");
    if (options.mode === "loop") throw new ConfigError("drainGroup", "applies to drain mode only; a loop-mode run never ends on its own");
  }
}
