import { expect } from "chai";
import { MaintenanceLoop } from "../../src/maintenance/maintenance-loop";
import type { MaintenanceService } from "../../src/maintenance/maintenance-service";
import type { LeaderLock } from "../../src/runtime/coordination";
import { createSilentLogger } from "../../src/logging/create-logger";
import { ManualClock } from "../../src/testing/manual-clock";
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

/** A service's period, and the times of its passes (from the loop's start) once {@link run} runs it. */
interface TimedService {
  readonly name: string;
  readonly everyMs: number;
  readonly passes: number[];
}

function timedService(name: string, everyMs: number): TimedService {
  return { name, everyMs, passes: [] };
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

  it("runs each service at once on becoming the leader, then each every everyMs, and gives the lock up when stopped", async () => {
    const rescue = timedService("lease-rescue", 1_000);
    const retention = timedService("retention", 10_000);
    const loop = run([rescue, retention]);
    await settle();
    expect(rescue.passes).to.deep.equal([0]);
    expect(retention.passes).to.deep.equal([0]);

    await advance(10_000);
    expect(retention.passes).to.deep.equal([0, 10_000]);
    expect(rescue.passes).to.deep.equal(Array.from({ length: 11 }, (_, n) => n * 1_000));

    stop.abort();
    await loop;
    expect(lock.held, "the lock is given up").to.equal(false);
  });

  it("runs nothing as a follower, takes the lock at an election, and runs each service at once again after losing and retaking it", async () => {
    lock.free = false;
    const retention = timedService("retention", 60_000);
    const loop = run([retention]);
    await advance(4_000);
    expect(retention.passes, "a follower runs nothing").to.deep.equal([]);

    lock.free = true;
    await advance(1_000); // the next election, at 5 s
    expect(retention.passes).to.deep.equal([5_000]);

    lock.held = false; // the lock's connection dropped
    await advance(4_500); // noticed at the next tick; not taken again before the next election, at 10 s
    expect(retention.passes).to.deep.equal([5_000]);
    await advance(500);
    expect(retention.passes, "at once on leading again, though its period has not passed").to.deep.equal([5_000, 10_000]);

    stop.abort();
    await loop;
  });
});
