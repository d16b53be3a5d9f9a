import { expect } from "chai";
import { MaintenanceLoop } from "../../src/maintenance/maintenance-loop";
import type { MaintenanceService } from "../../src/maintenance/maintenance-service";
import { RETENTION_FIRST_RUN_AFTER_MS, RetentionPruner } from "../../src/maintenance/retention-pruner";
import type { LeaderLock } from "../../src/runtime/coordination";
import { createSilentLogger } from "../../src/logging/create-logger";
import { ManualClock } from "../../src/testing/manual-clock";
import { InMemoryJobStore } from "../../src/testing/memory/in-memory-job-store";
import { settle } from "../../src/testing/settle";

/** A leader lock the test hands out and takes back. */
class HandLock implements LeaderLock {
  held = false;
  free = true;

  tryAcquire(): Promise<boolean> {
    if (this.free) this.held = true;
    return Promise.resolve(this.held);
  }

  release(): Promise<void> {
    this.held = false;
    return Promise.resolve();
  }
}

/** A service's timing, and the times of its passes (from the loop's start) once {@link run} runs it. */
interface TimedService {
  readonly name: string;
  readonly everyMs: number;
  readonly firstRunAfterMs?: number;
  readonly passes: number[];
}

function timedService(name: string, everyMs: number, firstRunAfterMs?: number): TimedService {
  return { name, everyMs, ...(firstRunAfterMs === undefined ? {} : { firstRunAfterMs }), passes: [] };
}

describe("MaintenanceLoop", () => {
  let clock: ManualClock;
  let lock: HandLock;
  let stop: AbortController;

  beforeEach(() => {
    clock = new ManualClock();
    lock = new HandLock();
    stop = new AbortController();
  });

  /** Runs the loop over `services` with ticks of 500 ms and elections every 5 s; each pass is stamped with the clock. */
  function run(services: readonly TimedService[]): Promise<void> {
    const started = clock.now();
    const stamped: MaintenanceService[] = services.map((service) => ({
      ...service,
      runOnce: () => {
        service.passes.push(clock.now() - started);
        return Promise.resolve("done");
      },
    }));
    return new MaintenanceLoop({ leader: lock, services: stamped, log: createSilentLogger(), clock, tickMs: 500, electionIntervalMs: 5_000 }).run(stop.signal);
  }

  /** Moves the clock by `ms` in ticks, letting the loop run after each. */
  async function advance(ms: number): Promise<void> {
    for (let passed = 0; passed < ms; passed += 500) {
      await clock.advance(500);
      await settle();
    }
  }

  it("runs a service at once on becoming the leader, one with firstRunAfterMs that much later, then each every everyMs", async () => {
    const rescue = timedService("lease-rescue", 1_000);
    const retention = timedService("retention", 10_000, 3_000);
    const loop = run([rescue, retention]);
    await settle();
    expect(rescue.passes).to.deep.equal([0]);
    expect(retention.passes, "not before 3 s").to.deep.equal([]);

    await advance(2_500);
    expect(retention.passes).to.deep.equal([]);
    await advance(500);
    expect(retention.passes).to.deep.equal([3_000]);
    await advance(10_000);
    expect(retention.passes).to.deep.equal([3_000, 13_000]);
    expect(rescue.passes).to.have.length(14);

    stop.abort();
    await loop;
    expect(lock.held, "the lock is given up").to.equal(false);
  });

  it("counts firstRunAfterMs from when this process became the leader, again after it lost the lock", async () => {
    lock.free = false;
    const retention = timedService("retention", 60_000, 2_000);
    const loop = run([retention]);
    await advance(4_000);
    expect(retention.passes, "a follower runs nothing").to.deep.equal([]);

    lock.free = true;
    await advance(1_000); // the next election, at 5 s
    expect(retention.passes).to.deep.equal([]);
    await advance(2_000);
    expect(retention.passes).to.deep.equal([7_000]);

    lock.held = false; // the lock's connection dropped
    await advance(3_000); // noticed at the next tick; taken again at the next election, at 10 s
    expect(retention.passes, "not at once on leading again").to.deep.equal([7_000]);
    await advance(1_500);
    expect(retention.passes).to.deep.equal([7_000]);
    await advance(500);
    expect(retention.passes).to.deep.equal([7_000, 12_000]);

    stop.abort();
    await loop;
  });

  it("waits RETENTION_FIRST_RUN_AFTER_MS (5 s) before a new leader's first retention pass", () => {
    const pruner = new RetentionPruner(new InMemoryJobStore());
    expect(RETENTION_FIRST_RUN_AFTER_MS).to.equal(5_000);
    expect(pruner.firstRunAfterMs).to.equal(RETENTION_FIRST_RUN_AFTER_MS);
    expect(pruner.everyMs).to.equal(600_000);
  });
});
