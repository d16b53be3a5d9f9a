import type { Logger } from "../logging/logger";
import type { Clock } from "../time/clock";
import type { RunCounters } from "./run-summary";

/** How often a busy run writes an `info` summary of what it did since the last one. */
export const PROGRESS_EVERY_MS = 30_000;

/** What the progress lines are written from and to. */
export interface RunProgressParts {
  readonly clock: Clock;
  readonly log: Logger;
  readonly queue: string;
  /** The run's counters and slots, read every {@link PROGRESS_EVERY_MS}. */
  readonly slots: { counts(): RunCounters; readonly running: number; readonly buffered: number };
}

/**
 * Every {@link PROGRESS_EVERY_MS} until `stop` aborts, one `info` line
 * with what happened since the last one (nothing when nothing did): the
 * per-job lines are `debug`, so this is what a normal log shows of a busy
 * worker.
 *
 * @example
 * ```ts
 * const progress = logRunProgress({ clock, log, queue, slots }, runOver.signal);
 * runOver.abort();
 * await progress;
 * ```
 */
export async function logRunProgress(parts: RunProgressParts, stop: AbortSignal): Promise<void> {
  const { clock, log, queue, slots } = parts;
  let last: RunCounters = slots.counts();
  while (!stop.aborted) {
    await clock.sleep(PROGRESS_EVERY_MS, stop);
    if (stop.aborted) return;
    const now = slots.counts();
    const done = now.succeeded - last.succeeded + now.retried - last.retried + now.dead - last.dead;
    if (now.claimed !== last.claimed || done > 0) {
      const delta = (key: keyof RunCounters): number => now[key] - last[key];
      log.info(
        `Worked on ${queue}: ${delta("succeeded")} succeeded, ${delta("retried")} retried, ${delta("dead")} dead, ` +
          `${delta("leaseLost")} lease lost, ${delta("cancelled")} cancelled in the last ${PROGRESS_EVERY_MS / 1_000} s (${Math.round((delta("succeeded") * 1_000) / PROGRESS_EVERY_MS)}/s); ` +
          `${slots.running} running, ${slots.buffered} waiting in the buffer`,
        {
          succeeded: delta("succeeded"),
          retried: delta("retried"),
          dead: delta("dead"),
          leaseLost: delta("leaseLost"),
          cancelled: delta("cancelled"),
          running: slots.running,
          buffered: slots.buffered,
        },
      );
    }
    last = now;
  }
}
