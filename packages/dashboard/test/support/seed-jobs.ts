import { defineJob, type JobStore } from "@stint/core";
import { buildNewJob } from "@stint/core/driver";
import { sql, type Kysely } from "kysely";

const WORKER = "dashboard-test-worker";

/** Enqueues `count` jobs of `queue` with payloads made by `payload(n)`; returns their ids. */
export async function enqueueJobs(store: JobStore, queue: string, count: number, payload: (n: number) => object = (n) => ({ n })): Promise<string[]> {
  const kind = defineJob<object>(queue);
  const results = await store.enqueueMany(Array.from({ length: count }, (_, n) => buildNewJob(kind, payload(n))));
  return results.map((result) => result.id);
}

/** Enqueues `count` jobs of `queue` and makes them dead with `error(id)` as the error; returns their ids. */
export async function makeDeadJobs(
  store: JobStore,
  queue: string,
  count: number,
  error: (id: string) => string,
  payload?: (n: number) => object,
): Promise<string[]> {
  await enqueueJobs(store, queue, count, payload);
  const claimed = await store.claimBatch({ queue, workerId: WORKER, limit: count, leaseMs: 60_000 });
  await store.markJobsDead({
    workerId: WORKER,
    jobs: claimed.map((job) => ({ id: job.id, attempt: job.attempt, failure: { message: error(job.id), code: "STINT_PERMANENT" } })),
  });
  return claimed.map((job) => job.id);
}

/** Enqueues `count` jobs of `queue` and completes them, each finished `finishedAgoMs(n)` ago. */
export async function makeSucceededJobs(
  db: Kysely<any>,
  schema: string,
  store: JobStore,
  queue: string,
  count: number,
  finishedAgoMs: (n: number) => number = () => 0,
): Promise<string[]> {
  await enqueueJobs(store, queue, count);
  const claimed = await store.claimBatch({ queue, workerId: WORKER, limit: count, leaseMs: 60_000 });
  await store.completeJobs({
    workerId: WORKER,
    jobs: claimed.map((job) => ({ id: job.id, attempt: job.attempt, resultJson: JSON.stringify({ sent: true }), durationMs: 40 + (Number(job.id) % 60) })),
  });
  const ids = claimed.map((job) => job.id);
  // Completed jobs are in finished_jobs; a new finish time moves a row to its day's partition.
  await sql`UPDATE ${sql.id(schema, "finished_jobs")} AS j SET finished_at = now() - s.ago * interval '1 millisecond', created_at = now() - s.ago * interval '1 millisecond' - interval '2 seconds'
    FROM (SELECT unnest(${ids}::bigint[]) AS id, unnest(${ids.map((_, n) => finishedAgoMs(n))}::double precision[]) AS ago) AS s
   WHERE j.id = s.id`.execute(db);
  return ids;
}

/** Claims `count` new jobs of `queue` and leaves them running. */
export async function makeRunningJobs(store: JobStore, queue: string, count: number): Promise<string[]> {
  await enqueueJobs(store, queue, count);
  return (await store.claimBatch({ queue, workerId: WORKER, limit: count, leaseMs: 600_000 })).map((job) => job.id);
}

/** Claims `count` new jobs of `queue` and fails them with a retry in an hour. */
export async function makeRetryingJobs(store: JobStore, queue: string, count: number, error: string): Promise<string[]> {
  await enqueueJobs(store, queue, count);
  const claimed = await store.claimBatch({ queue, workerId: WORKER, limit: count, leaseMs: 60_000 });
  await store.scheduleRetries({
    workerId: WORKER,
    jobs: claimed.map((job) => ({
      id: job.id,
      attempt: job.attempt,
      delayMs: 3_600_000,
      failure: { message: error, code: "STINT_TIMEOUT" },
      spendAttempt: true,
    })),
  });
  return claimed.map((job) => job.id);
}
