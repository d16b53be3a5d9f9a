import { WorkerEvents, type Logger } from "@stint/core";

/** Where a dead job is reported: a pager, a chat channel, an error tracker. */
export interface DeadJobAlert {
  notify(text: string): Promise<void>;
}

/**
 * An events hub for `runWorkers({ events })` that pages on dead jobs and
 * notes slow attempts: the kind of subscriber an application adds next to
 * the log lines. Its listeners are not awaited, so a slow pager cannot hold
 * up a worker, and a rejected `notify` is reported at `warn` by the hub.
 *
 * @example
 * ```ts
 * const report = await runWorkers({ workers, mode: "loop", store, log, healthPort: 8080, events: watchEvents(pager, log) });
 * ```
 */
export function watchEvents(alert: DeadJobAlert, log: Logger): WorkerEvents {
  const events = new WorkerEvents({ log });
  events.on("job.dead", (event) => alert.notify(`${event.queue} job ${event.jobId} is dead after ${event.attempt} attempts: ${event.error.message}`));
  events.on("job.succeeded", (event) => {
    if (event.durationMs > 60_000) log.warn(`Slow ${event.queue} job ${event.jobId}: ${Math.round(event.durationMs / 1_000)} s`);
  });
  return events;
}
