import { expect } from "chai";
import { getEventListeners } from "node:events";
import { raceAbort } from "../../src/worker/race-abort";
import { rejectionOf } from "../../src/testing";

describe("raceAbort", () => {
  it("settles like the work when the signal stays quiet, and is the work itself without a signal", async () => {
    const work = Promise.resolve(7);
    expect(raceAbort(work, undefined)).to.equal(work);
    expect(await raceAbort(Promise.resolve(8), new AbortController().signal)).to.equal(8);
    const failure = new Error("refused");
    expect(await rejectionOf(raceAbort(Promise.reject(failure), new AbortController().signal))).to.equal(failure);
  });

  it("rejects every race on a signal with its reason as it aborts, and absorbs the work that settles later", async () => {
    const stop = new AbortController();
    let finish: (value: number) => void = () => undefined;
    const hung = new Promise<number>((resolve) => (finish = resolve));
    const races = [raceAbort(hung, stop.signal), raceAbort(new Promise<number>(() => undefined), stop.signal)];
    const reason = new Error("stopping");
    stop.abort(reason);
    for (const race of races) expect(await rejectionOf(race)).to.equal(reason);
    finish(1);
    expect(await rejectionOf(raceAbort(Promise.resolve(2), stop.signal))).to.equal(reason);
  });

  it("listens to a signal once, however many races run on it", async () => {
    const stop = new AbortController();
    for (let n = 0; n < 100; n += 1) await raceAbort(Promise.resolve(n), stop.signal);
    await Promise.all(Array.from({ length: 50 }, (_, n) => raceAbort(Promise.resolve(n), stop.signal)));
    expect(getEventListeners(stop.signal, "abort")).to.have.length(1);
  });
});
