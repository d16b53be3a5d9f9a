import type { DeadHookClaim } from "../../store/dead-hook-claim";
import type { JobAttempt } from "../../store/job-store";
import { jobKey, toJobRecord, type MemoryJobRow } from "./memory-rows";
import type { MemoryState } from "./memory-state";

function hookKey(jobId: string, attempt: number): string {
  return `${jobId}:${attempt}`;
}

/** Leaves the pending `onDead` hook of a death just written (`row` is now `dead`); a death already recorded is left as it is. */
export function recordDeath(state: MemoryState, row: MemoryJobRow, now: number): void {
  const key = hookKey(row.id, row.attempts);
  if (state.deadHooks.has(key)) return;
  state.deadHooks.set(key, {
    jobId: row.id,
    attempt: row.attempts,
    queue: row.queue,
    diedAt: now,
    errorCode: row.errorCode,
    lastError: row.lastError,
    lockedBy: null,
    lockedUntil: -Infinity,
    deliveries: 0,
  });
}

/**
 * Claims up to `limit` deaths of `queue` whose hook has not run — never
 * claimed, or claimed by a worker whose claim lapsed — never claimed ones
 * first, oldest first; each is owned by `workerId` until `now + leaseMs`,
 * with one more delivery counted, and comes back with its job as stored
 * now (`undefined` when the job was deleted).
 */
export function claimDeadHooks(
  state: MemoryState,
  params: { readonly queue: string; readonly workerId: string; readonly limit: number; readonly leaseMs: number },
): readonly DeadHookClaim[] {
  const now = state.now();
  const picked = [...state.deadHooks.values()]
    .filter((hook) => hook.queue === params.queue && hook.lockedUntil < now)
    .sort((a, b) => a.lockedUntil - b.lockedUntil || a.diedAt - b.diedAt)
    .slice(0, params.limit);
  for (const hook of picked) {
    hook.lockedBy = params.workerId;
    hook.lockedUntil = now + params.leaseMs;
    hook.deliveries += 1;
  }
  picked.sort((a, b) => a.diedAt - b.diedAt || Number(a.jobId) - Number(b.jobId));
  return Object.freeze(
    picked.map((hook) => {
      const job = state.jobs.get(hook.jobId);
      return Object.freeze({
        jobId: hook.jobId,
        attempt: hook.attempt,
        delivery: hook.deliveries,
        diedAt: new Date(hook.diedAt),
        errorCode: hook.errorCode,
        lastError: hook.lastError,
        job: job === undefined ? undefined : toJobRecord(job),
      });
    }),
  );
}

/** Forgets the hooks of these deaths that `workerId` still holds; returns their job ids. */
export function finishDeadHooks(state: MemoryState, params: { readonly workerId: string; readonly hooks: readonly JobAttempt[] }): readonly string[] {
  const done: string[] = [];
  for (const hook of params.hooks) {
    const id = jobKey(hook.id);
    const key = id === undefined ? undefined : hookKey(id, hook.attempt);
    const row = key === undefined ? undefined : state.deadHooks.get(key);
    if (row?.lockedBy !== params.workerId) continue;
    state.deadHooks.delete(key!);
    done.push(row.jobId);
  }
  return Object.freeze(done);
}
