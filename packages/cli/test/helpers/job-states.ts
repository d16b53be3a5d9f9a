import { defineJob, type JobStore } from "@stint/core";
import { buildNewJob } from "@stint/core/driver";

const WORKER = "cli-test-worker";

/** Enqueues `count` jobs of `queue` with payloads `{ n }`; returns their ids. */
export async function enqueueJobs(store: JobStore, queue: string, count: number): Promise<string[]> {
  const kind = defineJob<{ n: number }>(queue);
  const rows = Array.from({ length: count }, (_, n) => buildNewJob(kind, { n }));
  const ids: string[] = [];
  for (let start = 0; start < rows.length; start += 1_000) {
    const results = await store.enqueueMany(rows.slice(start, start + 1_000));
    ids.push(...results.map((result) => result.id));
  }
  return ids;
}

/** Claims every due job of `queue` (as a test worker); returns them. */
async function claimAll(store: JobStore, queue: string, count: number) {
  const claimed = await store.claimBatch({ queue, workerId: WORKER, limit: count, leaseMs: 60_000 });
  if (claimed.length !== count) throw new Error(`claimed ${claimed.length} of ${count} jobs of ${queue}`);
  return claimed;
}

/** Makes `count` new jobs of `queue` dead, each with an error; returns their ids. */
export async function makeDeadJobs(store: JobStore, queue: string, count: number): Promise<string[]> {
  await enqueueJobs(store, queue, count);
  const claimed = await claimAll(store, queue, count);
  await store.markJobsDead({
    workerId: WORKER,
    jobs: claimed.map((job) => ({
      id: job.id,
      attempt: job.attempt,
      failure: { message: `Error: card declined for ${job.id}\n    at charge (billing.ts:12:5)`, code: "STINT_PERMANENT" },
    })),
  });
  return claimed.map((job) => job.id);
}

/** Makes `count` new jobs of `queue` fail once, with a retry due in an hour (state `failed`); returns their ids. */
export async function makeRetryingJobs(store: JobStore, queue: string, count: number): Promise<string[]> {
  await enqueueJobs(store, queue, count);
  const claimed = await claimAll(store, queue, count);
  const failure = { message: "Error: upstream answered 503", code: null };
  await store.scheduleRetries({
    workerId: WORKER,
    jobs: claimed.map((job) => ({ id: job.id, attempt: job.attempt, delayMs: 3_600_000, failure, spendAttempt: true })),
  });
  return claimed.map((job) => job.id);
}

/** Makes `count` new jobs of `queue` succeed now; returns their ids. */
export async function makeSucceededJobs(store: JobStore, queue: string, count: number): Promise<string[]> {
  await enqueueJobs(store, queue, count);
  const claimed = await claimAll(store, queue, count);
  await store.completeJobs({
    workerId: WORKER,
    jobs: claimed.map((job) => ({ id: job.id, attempt: job.attempt, resultJson: JSON.stringify({ ok: job.id }), durationMs: 7 })),
  });
  return claimed.map((job) => job.id);
}

/** Claims `count` new jobs of `queue` and leaves them running; returns their ids. */
export async function makeRunningJobs(store: JobStore, queue: string, count: number): Promise<string[]> {
  await enqueueJobs(store, queue, count);
  return (await claimAll(store, queue, count)).map((job) => job.id);
}

/**
 * Enqueues one job of `queue` with `meta`, has workers `w1` and `w2` fail
 * it (41 ms, then 52 ms), and `w3` report progress and succeed (63 ms).
 * Returns its id.
 */
export async function makeJobThatSucceededThirdTime(store: JobStore, queue: string, meta: Record<string, string>): Promise<string> {
  const { id } = await store.enqueue(buildNewJob(defineJob<{ n: number }>(queue), { n: 1 }, { meta }));
  for (const [workerId, durationMs] of [
    ["w1", 41],
    ["w2", 52],
  ] as const) {
    const [job] = await store.claimBatch({ queue, workerId, limit: 1, leaseMs: 60_000 });
    const failure = {
      message: `Error: gateway timeout (${workerId})\n    at charge (billing.ts:12:5)`,
      code: "STINT_TIMEOUT",
      summary: `Error: gateway timeout (${workerId})`,
    };
    await store.scheduleRetries({ workerId, jobs: [{ id, attempt: job!.attempt, delayMs: 0, failure, spendAttempt: true, durationMs }] });
  }
  const [job] = await store.claimBatch({ queue, workerId: "w3", limit: 1, leaseMs: 60_000 });
  await store.writeProgress({ workerId: "w3", job: job!, progressJson: '{"done":10,"of":10}' });
  await store.completeJobs({ workerId: "w3", jobs: [{ id, attempt: job!.attempt, resultJson: null, durationMs: 63 }] });
  return id;
}
