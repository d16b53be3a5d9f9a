import { expect } from "chai";
import type { ClaimedJob } from "../../src/job/job-record";
import type { Logger } from "../../src/logging/logger";
import type { JobStore } from "../../src/store/job-store";
import { ManualClock } from "../../src/testing/manual-clock";
import type { AttemptExecutor } from "../../src/worker/attempt-executor";
import type { BatchExecutor } from "../../src/worker/batch-executor";
import type { BatchLease } from "../../src/worker/batch-lease";
import { HandlerSlots } from "../../src/worker/handler-slots";
import { LeaseKeeper } from "../../src/worker/lease-keeper";
import { PrefetchSizer } from "../../src/worker/prefetch-sizer";
import { WakeUp } from "../../src/worker/wake-up";
import { resolveWorkerOptions } from "../../src/worker/worker-options";
import { claimedJob } from "../support/claimed-job";

const SILENT: Logger = { error() {}, warn() {}, info() {}, debug() {}, child: () => SILENT };

function claimed(ids: readonly string[]): ClaimedJob[] {
  return ids.map((id) => claimedJob(id));
}

/** Handler slots running batches of `size` through an executor that only records the leases it is handed. */
function batchSlots(size: number, waitMs: number) {
  const clock = new ManualClock();
  const options = resolveWorkerOptions({ leaseMs: 60_000, clock });
  const leases = new LeaseKeeper({} as JobStore, options, "w1", SILENT);
  const started: BatchLease[] = [];
  const executor = { run: (lease: BatchLease) => (started.push(lease), new Promise(() => undefined)) } as unknown as BatchExecutor<unknown>;
  const slots = new HandlerSlots<unknown>({
    executor: {} as AttemptExecutor<unknown>,
    concurrency: 4,
    prefetch: PrefetchSizer.fixed(0),
    nudge: new WakeUp(),
    batches: { executor, size, waitMs, clock, leases },
  });
  return { clock, leases, slots, started };
}

describe("HandlerSlots with batches", () => {
  it("buffers a claim in batches of the batch size, each under one lease held from the claim", () => {
    const { clock, leases, slots, started } = batchSlots(2, 0);
    slots.claimed(claimed(["1", "2", "3", "4", "5"]), clock.now(), 0);
    expect(slots.buffered).to.equal(5);

    slots.startBuffered();
    expect(started.map((lease) => lease.attempts.map(({ job }) => job.id))).to.deep.equal([["1", "2"], ["3", "4"], ["5"]]);
    expect(started.every((lease) => leases.holdsBatch(lease))).to.equal(true);
    expect(slots.buffered).to.equal(0);
    expect(slots.unrecorded).to.equal(5);
  });

  it("tops up a short batch with the next claim's jobs while it waits, from the earlier claim's time", async () => {
    const { clock, leases, slots, started } = batchSlots(4, 1_000);
    const firstSentAt = clock.now();
    slots.claimed(claimed(["1", "2"]), firstSentAt, 0);
    slots.startBuffered();
    expect(started).to.deep.equal([]);

    await clock.advance(500);
    slots.claimed(claimed(["3", "4", "5"]), clock.now(), 0);
    slots.startBuffered();
    expect(started.map((lease) => lease.attempts.map(({ job }) => job.id))).to.deep.equal([["1", "2", "3", "4"]]);
    expect(started[0]!.deadline).to.equal(leases.deadlineOf(firstSentAt));
    expect(slots.buffered, "the fifth job waits for its batch to fill").to.equal(1);

    await clock.advance(1_000);
    expect(started.map((lease) => lease.size)).to.deep.equal([4, 1]);
  });
});
