import { expect } from "chai";
import { settleWithin } from "../../src/worker/settle-within";
import { StoreRetryPolicy } from "../../src/worker/store-retry-policy";
import { ManualClock } from "../../src/testing/manual-clock";

describe("settleWithin", () => {
  it("passes on a value or an error that comes in time", async () => {
    const clock = new ManualClock();
    expect(await settleWithin(Promise.resolve(4), 100, clock)).to.deep.equal({ status: "fulfilled", value: 4 });
    const failure = new Error("refused");
    expect(await settleWithin(Promise.reject(failure), 100, clock)).to.deep.equal({ status: "rejected", reason: failure });
  });

  it("gives up on a promise that never settles once the time is up", async () => {
    const clock = new ManualClock();
    const answer = settleWithin(new Promise(() => undefined), 100, clock);
    await clock.advance(100);
    expect(await answer).to.deep.equal({ status: "timed-out" });
  });

  it("gives up at once when its signal aborts", async () => {
    const clock = new ManualClock();
    const stop = new AbortController();
    const answer = settleWithin(new Promise(() => undefined), 60_000, clock, stop.signal);
    stop.abort();
    expect(await answer).to.deep.equal({ status: "timed-out" });
  });
});

describe("StoreRetryPolicy", () => {
  it("abandons a call in flight when its signal aborts", async () => {
    const policy = new StoreRetryPolicy(new ManualClock());
    const stop = new AbortController();
    const answer = policy.run(() => new Promise<string>(() => undefined), { giveUpAfterMs: 60_000, signal: stop.signal });
    stop.abort();
    expect(await answer).to.equal(undefined);
  });
});
