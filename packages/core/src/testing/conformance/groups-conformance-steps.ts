import assert from "node:assert/strict";
import type { ClaimedJob } from "../../job/job-record";
import { newJob, type ConformanceContext } from "./conformance-harness";

/** The per-group cap of {@link runRandomGroupScenario}. */
const CAP = 2;
/** Its keys: four groups, the jobs without a group, and one serial line. */
const KEYS = ["g0", "g1", "g2", "g3", "", "line"] as const;
const WORKERS = ["w0", "w1", "w2"] as const;

/** A small seeded generator (mulberry32): the same steps on every store and every run. */
function seeded(seed: number): (below: number) => number {
  let a = seed >>> 0;
  return (below) => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return Math.floor((((t ^ (t >>> 14)) >>> 0) / 4_294_967_296) * below);
  };
}

interface Running {
  readonly job: ClaimedJob;
  readonly key: string;
  readonly workerId: string;
}

/**
 * Random enqueues (to four groups, no group, and a serial line), claims by
 * three workers and completions, on a queue with `maxRunningPerGroup: 2`;
 * after every claim, no group runs more than two jobs, the line at most
 * one, its jobs in enqueue order, and no job is claimed twice. Then the
 * queue is drained: every job enqueued ran exactly once.
 */
export async function runRandomGroupScenario<Tx>(ctx: ConformanceContext<Tx>, seed: number): Promise<void> {
  const store = ctx.store();
  const queue = ctx.freshQueue();
  const random = seeded(seed);
  await store.setQueueControls(queue, { maxRunningPerGroup: CAP });
  const enqueued = new Set<string>();
  const claimed = new Set<string>();
  const running = new Map<string, Running>();
  let lineEnqueued = 0;
  let lineNext = 0;

  const claim = async (workerId: string, limit: number): Promise<number> => {
    const jobs = await store.claimBatch({ queue, workerId, limit, leaseMs: 60_000 });
    for (const job of jobs) {
      const { key, n } = job.payload as { key: string; n: number };
      assert.ok(!claimed.has(job.id), `job ${job.id} claimed twice`);
      claimed.add(job.id);
      running.set(job.id, { job, key, workerId });
      if (key === "line") {
        assert.equal(n, lineNext, "the line runs in enqueue order");
        lineNext += 1;
      }
    }
    for (const key of KEYS) {
      const now = [...running.values()].filter((entry) => entry.key === key).length;
      if (key === "line") assert.ok(now <= 1, `the line runs ${now} jobs at once`);
      else if (key !== "") assert.ok(now <= CAP, `group ${key} runs ${now} jobs, over its cap of ${CAP}`);
    }
    return jobs.length;
  };
  const complete = async (entries: readonly Running[]): Promise<void> => {
    for (const workerId of WORKERS) {
      const mine = entries.filter((entry) => entry.workerId === workerId);
      if (mine.length === 0) continue;
      const done = await store.completeJobs({
        workerId,
        jobs: mine.map(({ job }) => ({ id: job.id, attempt: job.attempt, resultJson: null, durationMs: 1 })),
      });
      assert.equal(done.length, mine.length);
      for (const { job } of mine) running.delete(job.id);
    }
  };

  for (let step = 0; step < 40; step += 1) {
    const action = random(3);
    if (action === 0) {
      const jobs = Array.from({ length: 1 + random(5) }, () => {
        const key = KEYS[random(KEYS.length)]!;
        const n = key === "line" ? lineEnqueued++ : 0;
        return newJob(queue, { key, n }, key === "" ? { priority: random(3) } : { groupKey: key, serial: key === "line" ? "hold" : null, priority: random(3) });
      });
      for (const { id } of await store.enqueueMany(jobs)) enqueued.add(id);
    } else if (action === 1) {
      await claim(WORKERS[random(WORKERS.length)]!, 1 + random(6));
    } else {
      await complete([...running.values()].filter(() => random(2) === 0));
    }
  }
  for (let round = 0; round < 500 && (running.size > 0 || claimed.size < enqueued.size); round += 1) {
    await claim("w0", 5);
    await complete([...running.values()]);
  }
  assert.equal(running.size, 0);
  assert.deepStrictEqual([...claimed].sort(), [...enqueued].sort(), "every job ran exactly once");
}
