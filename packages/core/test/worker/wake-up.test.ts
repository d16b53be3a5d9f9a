import { expect } from "chai";
import { WakeUp } from "../../src/worker/wake-up";
import { settle } from "../../src/testing/settle";

describe("WakeUp", () => {
  it("releases every waiter at once", async () => {
    const wakeUp = new WakeUp();
    let released = 0;
    for (let i = 0; i < 3; i += 1) void wakeUp.wait().then(() => (released += 1));
    wakeUp.wake();
    await settle();
    expect(released).to.equal(3);
  });

  it("keeps a wake-up that came while nobody waited for the next wait, once", async () => {
    const wakeUp = new WakeUp();
    wakeUp.wake();
    let first = false;
    let second = false;
    void wakeUp.wait().then(() => (first = true));
    void wakeUp.wait().then(() => (second = true));
    await settle();
    expect([first, second]).to.deep.equal([true, false]);
  });

  it("lets an aborted waiter go without releasing the others", async () => {
    const wakeUp = new WakeUp();
    const stop = new AbortController();
    let aborted = false;
    let other = false;
    void wakeUp.wait(stop.signal).then(() => (aborted = true));
    void wakeUp.wait().then(() => (other = true));
    stop.abort();
    await settle();
    expect([aborted, other]).to.deep.equal([true, false]);
  });

  it("ends a waiter at cancel and forgets it, so a later wake-up is kept for the next wait", async () => {
    const wakeUp = new WakeUp();
    const { woken, cancel } = wakeUp.waiter();
    let ended = false;
    void woken.then(() => (ended = true));
    cancel();
    await settle();
    expect(ended, "cancel ends the wait").to.equal(true);
    wakeUp.wake();
    let next = false;
    void wakeUp.wait().then(() => (next = true));
    await settle();
    expect(next, "the wake-up after the cancel was not spent on the cancelled waiter").to.equal(true);
  });
});
