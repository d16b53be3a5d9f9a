import { ErrorCode } from "../errors/error-codes";
import { redactingLogger, secretValuesOf } from "../job/secret-fields";
import type { Logger } from "../logging/logger";
import { WorkerEvents, type JobEventBase } from "./worker-events";
import { processIdentity } from "../worker/worker-id";

/**
 * The worker's log lines, as one subscriber of its events: the start and
 * stop lines at `info` (`error` when an outage stopped the run), per-job
 * lines at `debug` for successes and snoozes (not subscribed at all when
 * `debug` is off, so those events cost nothing), `info` for jobs given
 * back and jobs an operator cancelled, `warn` for retries and lost leases,
 * `error` for dead jobs and outcomes that could not be written. `log` carries the run's `queue` and
 * `workerId`; each job line adds `jobId`, `attempt` and `maxAttempts`, with
 * the values of the kind's `secretFields` redacted.
 *
 * @example
 * ```ts
 * const hubs = [logLines(log.child({ queue, workerId }), job.secretFields ?? []), worker.events];
 * ```
 */
export function logLines(log: Logger, secretFields: readonly string[]): WorkerEvents {
  const events = new WorkerEvents({ log });
  const jobLog = (event: JobEventBase): Logger =>
    redactingLogger(log.child({ jobId: event.jobId, attempt: event.attempt, maxAttempts: event.maxAttempts }), secretValuesOf(event.payload, secretFields));
  const label = (event: JobEventBase): string => `job ${event.jobId} (${event.queue}, attempt ${event.attempt}/${event.maxAttempts})`;
  const fields = (event: { readonly durationMs: number }): { durationMs: number } => ({ durationMs: Math.round(event.durationMs) });

  events.on("worker.started", (event) =>
    log.info(`Started worker ${event.workerId} for ${event.queue} in ${processIdentity()} (concurrency ${event.concurrency}, lease ${event.leaseMs} ms)`),
  );
  events.on("worker.stopped", ({ summary }) => {
    const line =
      `Stopped worker for ${summary.queue} (${summary.stoppedBecause}): ${summary.claimed} claimed, ${summary.succeeded} succeeded, ` +
      `${summary.retried} retried, ${summary.dead} dead, ${summary.leaseLost} lease lost, ${summary.cancelled} cancelled, ${summary.writeFailed} not recorded in ${summary.durationMs} ms`;
    if (summary.stoppedBecause === "infrastructure" || summary.stoppedBecause === "config")
      log.error(`${line}: ${summary.error ?? "unknown error"}`, { ...summary });
    else log.info(line, { ...summary });
  });
  if (log.isLevelEnabled?.("debug") ?? true) {
    events.on("job.succeeded", (event) => jobLog(event).debug(`Completed ${label(event)} in ${fields(event).durationMs} ms`, fields(event)));
    events.on("job.snoozed", (event) => jobLog(event).debug(`Snoozed ${label(event)} for ${event.delayMs} ms`, fields(event)));
  }
  events.on("job.released", (event) => jobLog(event).info(`Gave back ${label(event)}: the worker is stopping; its attempt is not spent`, fields(event)));
  events.on("job.failed", (event) => {
    if (!event.willRetry) return;
    const delayMs = event.retryAt === null ? 0 : event.retryAt.getTime() - event.at.getTime();
    jobLog(event).warn(`${capitalise(label(event))} failed: ${event.error.message}; retrying in ${delayMs} ms`, {
      ...fields(event),
      errorCode: event.errorCode,
    });
  });
  events.on("job.dead", (event) => {
    const why = event.errorCode === ErrorCode.Parse ? "has an invalid payload and is dead" : "is dead";
    jobLog(event).error(`${capitalise(label(event))} ${why}: ${event.error.message}`, { ...fields(event), errorCode: event.errorCode });
  });
  events.on("job.leaseLost", (event) => {
    if (event.discarded !== null) {
      jobLog(event).warn(`Another worker owns ${label(event)} now; its ${event.discarded} outcome is discarded`, fields(event));
      return;
    }
    jobLog(event).warn(`Stopped ${label(event)}: ${event.error.message}; ${lapseConsequence(event)}`, fields(event));
  });
  events.on("job.cancelled", (event) => jobLog(event).info(`${capitalise(label(event))} ${cancelConsequence(event)}`, fields(event)));
  events.on("job.writeFailed", (event) =>
    jobLog(event).error(`Could not record the outcome of ${label(event)} (${event.outcome}); it runs again once its lease lapses`, fields(event)),
  );
  events.on("job.onDeadFailed", (event) =>
    jobLog(event).error(
      `onDead ${event.timedOut ? "timed out" : "failed"} for dead ${label(event)}: ${event.error.message}; the job stays dead and the hook is not called again`,
      { ...fields(event), delivery: event.delivery },
    ),
  );
  return events;
}

function capitalise(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

function cancelConsequence(event: { readonly started: boolean; readonly discarded: string | null }): string {
  if (!event.started) return "was cancelled before it started; its handler did not run";
  if (event.discarded !== null) return `was cancelled while it ran; its ${event.discarded} outcome is discarded`;
  return "was cancelled while it ran; its handler was told to stop";
}

function lapseConsequence(event: JobEventBase & { readonly started: boolean }): string {
  if (!event.started) return "it never started and keeps its attempt";
  return event.attempt >= event.maxAttempts ? "no attempt is left, so it is dead" : "the job is due again";
}
