import { expect } from "chai";
import { ConfigError } from "../../src/errors/config-errors";
import { ManualClock } from "../../src/testing/manual-clock";

describe("ManualClock", () => {
  it("stands still until advanced, then wakes each sleeper at its time, in order", async () => {
    const clock = new ManualClock(new Date("2030-01-01T00:00:00Z"));
    const woke: string[] = [];
    void clock.sleep(300).then(() => woke.push(`late at ${clock.now() - Date.UTC(2030, 0, 1)}`));
    void clock.sleep(100).then(() => woke.push(`early at ${clock.now() - Date.UTC(2030, 0, 1)}`));
    expect(clock.pendingSleeps).to.equal(2);
    await clock.advance(99);
    expect(woke).to.deep.equal([]);
    await clock.advance(1_000);
    expect(woke).to.deep.equal(["early at 100", "late at 300"]);
    expect(clock.now()).to.equal(Date.UTC(2030, 0, 1) + 1_099);
    expect(clock.pendingSleeps).to.equal(0);
  });

  it("lets a sleeper's follow-up run before time moves on", async () => {
    const clock = new ManualClock();
    const seen: number[] = [];
    const loop = async (): Promise<void> => {
      for (let n = 0; n < 3; n += 1) {
        await clock.sleep(10);
        seen.push(clock.now());
      }
    };
    const start = clock.now();
    const done = loop();
    await clock.advance(100);
    await done;
    expect(seen.map((at) => at - start)).to.deep.equal([10, 20, 30]);
  });

  it("sets the time forward, firing what is due, and refuses to go back", async () => {
    const clock = new ManualClock(0);
    let woke = false;
    void clock.sleep(5_000).then(() => (woke = true));
    await clock.set(new Date(5_000));
    expect(woke).to.equal(true);
    const refusal = (promise: Promise<void>) =>
      promise.then(
        () => undefined,
        (thrown: unknown) => thrown as Error,
      );
    const back = await refusal(clock.set(4_999));
    expect(back).to.be.instanceOf(ConfigError);
    expect(back?.message).to.contain("instant");
    expect((await refusal(clock.advance(-1)))?.message).to.contain("`ms`");
  });

  it("ends a sleep at once when its signal aborts, and jumps without waking anyone", async () => {
    const clock = new ManualClock(0);
    const abort = new AbortController();
    const slept = clock.sleep(60_000, abort.signal);
    abort.abort();
    await slept;
    let woke = false;
    void clock.sleep(10).then(() => (woke = true));
    clock.jump(60_000);
    await Promise.resolve();
    expect(woke, "a jump fires no timer").to.equal(false);
    expect(clock.now()).to.equal(60_000);
    await clock.advance(0);
    expect(woke).to.equal(true);
  });
});
