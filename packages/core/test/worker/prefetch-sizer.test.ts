import { expect } from "chai";
import fc from "fast-check";
import { PREFETCH_AHEAD_MS, PrefetchSizer } from "../../src/worker/prefetch-sizer";
import { ManualClock } from "../../src/testing/manual-clock";

/** Finishes `jobs` jobs spread over `ms`, sampling the target every 5 ms as a claim loop would. */
async function finishAtPace(sizer: PrefetchSizer, clock: ManualClock, jobs: number, ms: number): Promise<number> {
  const steps = ms / 5;
  let target = sizer.target();
  for (let step = 0; step < steps; step += 1) {
    const due = Math.floor(((step + 1) * jobs) / steps) - Math.floor((step * jobs) / steps);
    for (let job = 0; job < due; job += 1) sizer.finished();
    await clock.advance(5);
    target = sizer.target();
  }
  return target;
}

describe("PrefetchSizer", () => {
  it("holds a fixed size whatever the pace", async () => {
    const clock = new ManualClock();
    const sizer = PrefetchSizer.fixed(8);
    expect(sizer.target()).to.equal(8);
    expect(await finishAtPace(sizer, clock, 10_000, 1_000)).to.equal(8);
    expect(PrefetchSizer.fixed(0).target()).to.equal(0);
  });

  it("starts at nothing ahead and grows to the cap when jobs finish fast", async () => {
    const clock = new ManualClock();
    const sizer = PrefetchSizer.adaptive(500, clock);
    expect(sizer.target(), "no pace known yet").to.equal(0);
    // 20 jobs per ms: 50 ms of work is 1,000 jobs, above the cap.
    expect(await finishAtPace(sizer, clock, 20_000, 1_000)).to.equal(500);
  });

  it("holds about 50 ms of work at a moderate pace", async () => {
    const clock = new ManualClock();
    const sizer = PrefetchSizer.adaptive(500, clock);
    // 2 jobs per ms for a second: about 100 jobs ahead.
    const target = await finishAtPace(sizer, clock, 2_000, 1_000);
    expect(target).to.be.within(95, 101);
    expect(PREFETCH_AHEAD_MS).to.equal(50);
  });

  it("shrinks to a job or none when jobs turn slow, so one worker does not hoard them", async () => {
    const clock = new ManualClock();
    const sizer = PrefetchSizer.adaptive(500, clock);
    await finishAtPace(sizer, clock, 20_000, 1_000);
    // Then 10 jobs a second (one every 100 ms) for five seconds.
    expect(await finishAtPace(sizer, clock, 50, 5_000)).to.be.at.most(1);
  });

  it("never leaves 0 … max for any pace and sampling", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 0, max: 2_000 }),
        fc.array(fc.tuple(fc.integer({ min: 0, max: 5_000 }), fc.integer({ min: 0, max: 1_000 })), { maxLength: 40 }),
        async (max, steps) => {
          const clock = new ManualClock();
          const sizer = PrefetchSizer.adaptive(max, clock);
          for (const [jobs, ms] of steps) {
            for (let job = 0; job < jobs; job += 1) sizer.finished();
            await clock.advance(ms);
            const target = sizer.target();
            if (!Number.isInteger(target) || target < 0 || target > max) return false;
          }
          return true;
        },
      ),
    );
  });
});
