import type { JobRecord } from "@stint/core";
import { isoTime as iso } from "./time-text";

/** A job as `--json` prints it: every field, times in ISO 8601 (or `"infinity"`, see `isoTime`). */
export function jobJson(job: JobRecord): Record<string, unknown> {
  return {
    id: job.id,
    queue: job.queue,
    state: job.state,
    priority: job.priority,
    attempts: job.attempts,
    maxAttempts: job.maxAttempts,
    runAt: iso(job.runAt),
    startBy: iso(job.startBy),
    timeoutMs: job.timeoutMs,
    lockedBy: job.lockedBy,
    lockedUntil: iso(job.lockedUntil),
    dedupeKey: job.dedupeKey,
    group: job.group,
    serialKey: job.serialKey,
    workflowId: job.workflowId,
    step: job.step,
    errorCode: job.errorCode,
    lastError: job.lastError,
    payload: job.payload,
    result: job.result ?? null,
    createdAt: iso(job.createdAt),
    startedAt: iso(job.startedAt),
    finishedAt: iso(job.finishedAt),
    durationMs: job.durationMs,
    updatedAt: iso(job.updatedAt),
    meta: job.meta,
    progress: job.progress,
  };
}
