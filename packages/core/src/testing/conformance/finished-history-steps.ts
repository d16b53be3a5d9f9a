import assert from "node:assert/strict";
import type { ClaimedJob } from "../../job/job-record";
import type { JobState } from "../../job/job-state";
import type { JobStore } from "../../store/job-store";
import { claimOne, newJob } from "./conformance-harness";

// Steps and checks of the finished-history conformance cases (finished-history-conformance.ts).

export const permanent = { message: "PermanentError: invoice 812 does not exist", code: "STINT_PERMANENT" };
export const transient = { message: "Error: the mail server timed out", code: "STINT_RETRYABLE" };

export type Ending = "succeed" | "die" | "cancel";

/** Claims the queue's next job and finishes it as told: succeeded with `{ n }` as its result, dead, or cancelled while it ran. */
export async function finishNext<Tx>(store: JobStore<Tx>, queue: string, how: Ending): Promise<ClaimedJob> {
  const job = await claimOne(store, queue, "w");
  if (how === "succeed") {
    assert.deepStrictEqual(await store.completeJobs({ workerId: "w", jobs: [{ ...job, resultJson: JSON.stringify({ n: job.attempt }), durationMs: 3 }] }), [
      job.id,
    ]);
  } else if (how === "die") {
    assert.deepStrictEqual(await store.markJobsDead({ workerId: "w", jobs: [{ ...job, failure: permanent }] }), [job.id]);
  } else {
    assert.equal(await store.cancelJob({ id: job.id }), true);
  }
  return job;
}

/** Enqueues one job per ending and finishes them in that order, one statement each; returns them in the same order. */
export async function finishEach<Tx>(store: JobStore<Tx>, queue: string, endings: readonly Ending[]): Promise<ClaimedJob[]> {
  const finished: ClaimedJob[] = [];
  for (const how of endings) {
    await store.enqueue(newJob(queue, { how }));
    finished.push(await finishNext(store, queue, how));
  }
  return finished;
}

/** The latest finish time of `ids`, in milliseconds since the epoch. */
export async function lastFinish<Tx>(store: JobStore<Tx>, ids: readonly string[]): Promise<number> {
  let latest = -Infinity;
  for (const id of ids) {
    const finishedAt = (await store.getJob({ id }))?.finishedAt;
    assert.ok(finishedAt instanceof Date, `job ${id} has a finish time`);
    latest = Math.max(latest, finishedAt.getTime());
  }
  return latest;
}

/**
 * Asserts that `listJobs` lists the queue's jobs exactly as `expected`
 * says (id to state), each once, newest first, and that `countByQueue`
 * counts each of them once in its state.
 */
export async function assertListedOnce<Tx>(store: JobStore<Tx>, queue: string, expected: Readonly<Record<string, JobState>>): Promise<void> {
  const listed = await store.listJobs({ queue, limit: 1_000 });
  const ids = listed.map((job) => job.id);
  assert.equal(new Set(ids).size, ids.length, `listJobs lists a job twice: ${ids.join(", ")}`);
  const newestFirst = Object.keys(expected).sort((a, b) => (BigInt(b) > BigInt(a) ? 1 : BigInt(b) < BigInt(a) ? -1 : 0));
  assert.deepStrictEqual(
    listed.map((job) => [job.id, job.state]),
    newestFirst.map((id) => [id, expected[id]]),
  );
  const [counted] = await store.countByQueue({ queues: [queue] });
  const wanted: Record<JobState, number> = { blocked: 0, queued: 0, running: 0, failed: 0, succeeded: 0, dead: 0, cancelled: 0 };
  for (const state of Object.values(expected)) wanted[state] += 1;
  assert.deepStrictEqual({ ...counted?.counts }, wanted);
}
