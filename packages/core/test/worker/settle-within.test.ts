import { expect } from "chai";
import { settleWithin } from "../../src/worker/settle-within";
import { InfrastructureError } from "../../src/errors/infrastructure-error";
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

  it("tells its outage listener of every infrastructure error, retried or final, and of nothing else", async () => {
    const clock = new ManualClock();
    const outages: string[] = [];
    const policy = new StoreRetryPolicy(clock, { connectionLost: (why) => outages.push(why) });
    let tries = 0;
    const answer = policy.run(
      () => {
        tries += 1;
        return tries === 1 ? Promise.reject(new InfrastructureError("connection reset")) : Promise.resolve("claimed");
      },
      { giveUpAfterMs: 60_000 },
    );
    await clock.advance(policy.delayBefore(1));
    expect(await answer).to.equal("claimed");
    expect(outages).to.have.length(1);
    expect(outages[0]).to.contain("connection reset");

    const refused = policy.run(() => Promise.reject(new Error("syntax error")), { giveUpAfterMs: 60_000 });
    await refused.then(
      () => expect.fail("should reject"),
      (error: unknown) => expect((error as Error).message).to.equal("syntax error"),
    );
    expect(outages).to.have.length(1);
  });
});
