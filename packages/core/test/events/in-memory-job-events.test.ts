import { expect } from "chai";
import { ConfigError } from "../../src/errors/config-errors";
import { InMemoryJobEvents, type JobEvent, type JobEventGap } from "../../src/events/job-events";

const at = new Date("2026-11-26T21:00:00Z");

describe("InMemoryJobEvents", () => {
  it("delivers each event to the subscriptions whose queues and types it passes, until closed", async () => {
    const events = new InMemoryJobEvents();
    const emails: JobEvent[] = [];
    const finishes: JobEvent[] = [];
    const sub = await events.subscribe({ queues: ["emails"] }, { onEvent: (event) => emails.push(event) });
    await events.subscribe({ types: ["succeeded"] }, { onEvent: (event) => finishes.push(event) });
    events.publish({ type: "started", jobId: "1", queue: "emails", attempt: 1, at });
    events.publish({ type: "succeeded", jobId: "2", queue: "reports", attempt: 1, at });
    await sub.close();
    events.publish({ type: "succeeded", jobId: "1", queue: "emails", attempt: 1, at });
    expect(emails.map((event) => event.jobId)).to.deep.equal(["1"]);
    expect(finishes.map((event) => `${event.queue}:${event.jobId}`)).to.deep.equal(["reports:2", "emails:1"]);
    expect(events.subscribers).to.equal(1);
  });

  it("reports a summarised gap only to subscriptions of its queue and type, and any other gap to all", async () => {
    const events = new InMemoryJobEvents();
    const gaps: JobEventGap[] = [];
    await events.subscribe({ queues: ["emails"] }, { onEvent: () => undefined, onGap: (gap) => gaps.push(gap) });
    events.reportGap({ reason: "summarised", type: "enqueued", queue: "reports", count: 5_000 });
    events.reportGap({ reason: "reconnected" });
    expect(gaps).to.deep.equal([{ reason: "reconnected" }]);
  });

  it("keeps delivering when a handler throws, and reports the failure", async () => {
    const errors: Error[] = [];
    const events = new InMemoryJobEvents({ onError: (error) => errors.push(error) });
    const seen: string[] = [];
    await events.subscribe(
      {},
      {
        onEvent: () => {
          throw new Error("broken handler");
        },
      },
    );
    await events.subscribe({}, { onEvent: (event) => seen.push(event.jobId) });
    events.publish({ type: "enqueued", jobId: "7", queue: "emails", attempt: 0, at });
    expect(seen).to.deep.equal(["7"]);
    expect(errors.map((error) => error.message)).to.deep.equal(["broken handler"]);
  });

  it("refuses a filter or handler it cannot use", () => {
    const events = new InMemoryJobEvents();
    expect(() => events.subscribe({ queues: [] }, { onEvent: () => undefined })).to.throw(ConfigError);
    expect(() => events.subscribe({ types: ["finished" as never] }, { onEvent: () => undefined })).to.throw(ConfigError);
    expect(() => events.subscribe({}, {} as never)).to.throw(ConfigError);
  });
});
