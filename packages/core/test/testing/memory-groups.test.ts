import { expect } from "chai";
import fc from "fast-check";
import type { ClaimedJob } from "../../src/job/job-record";
import { newJob } from "../../src/testing/conformance/conformance-harness";
import { ManualClock } from "../../src/testing/manual-clock";
import { InMemoryJobStore } from "../../src/testing/memory/in-memory-job-store";

const CAP = 2;
const KEYS = ["a", "b", "c", "", "line"] as const;
const WORKERS = ["w0", "w1"] as const;

type Step =
  | { readonly kind: "enqueue"; readonly key: number; readonly priority: number; readonly delayMs: number }
  | { readonly kind: "claim"; readonly worker: number; readonly limit: number }
  | { readonly kind: "complete"; readonly pick: number }
  | { readonly kind: "retry"; readonly pick: number; readonly delayMs: number }
  | { readonly kind: "advance"; readonly ms: number };

const step: fc.Arbitrary<Step> = fc.oneof(
  fc.record({
    kind: fc.constant("enqueue" as const),
    key: fc.nat(KEYS.length - 1),
    priority: fc.integer({ min: -2, max: 2 }),
    delayMs: fc.constantFrom(0, 0, 50),
  }),
  fc.record({ kind: fc.constant("claim" as const), worker: fc.nat(WORKERS.length - 1), limit: fc.integer({ min: 1, max: 6 }) }),
  fc.record({ kind: fc.constant("complete" as const), pick: fc.nat() }),
  fc.record({ kind: fc.constant("retry" as const), pick: fc.nat(), delayMs: fc.constantFrom(0, 30) }),
  fc.record({ kind: fc.constant("advance" as const), ms: fc.integer({ min: 1, max: 60 }) }),
);

interface Running {
  readonly job: ClaimedJob;
  readonly key: string;
  readonly workerId: string;
}

/** Runs `steps` on a fresh store, checking the group rules after every claim; then drains the queue. */
async function check(steps: readonly Step[]): Promise<void> {
  const clock = new ManualClock(Date.UTC(2030, 0, 1));
  const store = new InMemoryJobStore({ clock });
  const queue = "property";
  await store.setQueueControls(queue, { maxRunningPerGroup: CAP });
  const running = new Map<string, Running>();
  const succeeded = new Set<string>();
  const enqueued: string[] = [];
  const lineIds: string[] = [];

  const claim = async (workerId: string, limit: number): Promise<void> => {
    for (const job of await store.claimBatch({ queue, workerId, limit, leaseMs: 600_000 })) {
      const { key } = job.payload as { key: string };
      expect(succeeded.has(job.id), `job ${job.id} ran again after it succeeded`).to.equal(false);
      if (key === "line") expect(job.id, "the line runs its oldest unfinished job").to.equal(lineIds.find((id) => !succeeded.has(id)));
      running.set(job.id, { job, key, workerId });
    }
    for (const key of KEYS) {
      const now = [...running.values()].filter((entry) => entry.key === key).length;
      if (key === "line") expect(now, "jobs of the line running").to.be.at.most(1);
      else if (key !== "") expect(now, `jobs of group ${key} running`).to.be.at.most(CAP);
    }
  };
  const picked = (pick: number): Running | undefined => [...running.values()][pick % Math.max(running.size, 1)];
  const complete = async (entry: Running): Promise<void> => {
    const done = await store.completeJobs({
      workerId: entry.workerId,
      jobs: [{ id: entry.job.id, attempt: entry.job.attempt, resultJson: null, durationMs: 1 }],
    });
    expect(done).to.deep.equal([entry.job.id]);
    running.delete(entry.job.id);
    succeeded.add(entry.job.id);
  };

  for (const next of steps) {
    if (next.kind === "enqueue") {
      const key = KEYS[next.key]!;
      const extra = key === "" ? {} : { groupKey: key, serial: key === "line" ? ("hold" as const) : null };
      const { id } = await store.enqueue(newJob(queue, { key }, { priority: next.priority, delayMs: next.delayMs, ...extra }));
      enqueued.push(id);
      if (key === "line") lineIds.push(id);
    } else if (next.kind === "claim") {
      await claim(WORKERS[next.worker]!, next.limit);
    } else if (next.kind === "complete") {
      const entry = picked(next.pick);
      if (entry !== undefined) await complete(entry);
    } else if (next.kind === "retry") {
      const entry = picked(next.pick);
      if (entry === undefined) continue;
      const { job, workerId } = entry;
      const failure = { message: "Error: try again", code: null };
      await store.scheduleRetries({ workerId, jobs: [{ id: job.id, attempt: job.attempt, delayMs: next.delayMs, failure, spendAttempt: false }] });
      running.delete(job.id);
    } else {
      await clock.advance(next.ms);
    }
  }
  for (let round = 0; round < 1_000 && succeeded.size < enqueued.length; round += 1) {
    await clock.advance(100);
    await claim("w0", 4);
    for (const entry of [...running.values()]) await complete(entry);
  }
  expect([...succeeded].sort()).to.deep.equal([...enqueued].sort());
}

describe("the in-memory store's groups and serial lines, for any steps", () => {
  it("never runs more than maxRunningPerGroup of a group or more than one job of a line, runs a line in order, and runs every job to success once", async () => {
    await fc.assert(fc.asyncProperty(fc.array(step, { minLength: 10, maxLength: 80, size: "max" }), check), { numRuns: 200 });
  });
});
