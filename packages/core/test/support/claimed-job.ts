import type { ClaimedJob } from "../../src/job/job-record";

/**
 * A claimed first attempt of job `id` on the queue "mail", as a claim
 * hands it over.
 *
 * @example
 * ```ts
 * lease.add(claimedJob("812"), 0, deadline);
 * ```
 */
export function claimedJob(id: string): ClaimedJob {
  const at = new Date(0);
  return { id, queue: "mail", payload: {}, attempt: 1, maxAttempts: 3, priority: 0, timeoutMs: null, createdAt: at, runAt: at };
}
