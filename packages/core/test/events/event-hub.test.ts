import { expect } from "chai";
import { setImmediate as nextTurn } from "node:timers/promises";
import { EventHub } from "../../src/events/event-hub";
import type { LogFields, Logger } from "../../src/logging/logger";

interface Events {
  ping: { readonly n: number };
  pong: { readonly text: string };
}

class WarnLog implements Logger {
  readonly warnings: { message: string; fields?: LogFields }[] = [];
  error() {}
  info() {}
  debug() {}
  warn(message: string, fields?: LogFields) {
    this.warnings.push({ message, ...(fields ? { fields } : {}) });
  }
  child(): Logger {
    return this;
  }
}

describe("EventHub", () => {
  it("calls the listeners of an event in subscription order, and only those", () => {
    const hub = new EventHub<Events>();
    const seen: string[] = [];
    hub.on("ping", (event) => seen.push(`a${event.n}`));
    hub.on("ping", (event) => seen.push(`b${event.n}`));
    hub.on("pong", (event) => seen.push(event.text));
    hub.emit("ping", { n: 1 });
    expect(seen).to.deep.equal(["a1", "b1"]);
  });

  it("counts listeners and stops calling one once it unsubscribes", () => {
    const hub = new EventHub<Events>();
    const seen: number[] = [];
    const off = hub.on("ping", (event) => seen.push(event.n));
    expect(hub.listenerCount("ping")).to.equal(1);
    expect(hub.listenerCount("pong")).to.equal(0);
    hub.emit("ping", { n: 1 });
    off();
    hub.emit("ping", { n: 2 });
    expect(seen).to.deep.equal([1]);
    expect(hub.listenerCount("ping")).to.equal(0);
  });

  it("delivers to the other listeners when one throws, and reports the throw with a count", () => {
    const log = new WarnLog();
    const hub = new EventHub<Events>({ log });
    const seen: number[] = [];
    hub.on("ping", () => {
      throw new Error("listener bug");
    });
    hub.on("ping", (event) => seen.push(event.n));
    for (let n = 1; n <= 12; n += 1) expect(() => hub.emit("ping", { n })).not.to.throw();
    expect(seen).to.have.length(12);
    expect(
      log.warnings.map((line) => line.fields?.["failures"]),
      "reported on the 1st and 10th failure only",
    ).to.deep.equal([1, 10]);
    expect(log.warnings[0]?.message).to.contain("A listener of ping failed (1 time so far): listener bug");
  });

  it("does not await a listener's promise and reports its rejection", async () => {
    const log = new WarnLog();
    const hub = new EventHub<Events>({ log });
    let settled = false;
    hub.on("ping", () => new Promise<void>((resolve) => setTimeout(() => ((settled = true), resolve()), 5_000).unref()));
    hub.on("pong", async () => {
      throw new Error("async listener bug");
    });
    hub.emit("ping", { n: 1 });
    hub.emit("pong", { text: "x" });
    expect(settled, "emit returned before the slow listener finished").to.equal(false);
    await nextTurn();
    expect(log.warnings.map((line) => line.message)).to.deep.equal([
      "A listener of pong failed (1 time so far): async listener bug; outcomes and other listeners are not affected",
    ]);
  });

  it("refuses a listener that is not a function, naming the event", () => {
    const hub = new EventHub<Events>();
    expect(() => hub.on("ping", "nope" as never)).to.throw(TypeError, 'events.on("ping", listener)');
  });
});
