import { defineJob, type JobEvent } from "@stint/core";
import { buildNewJob } from "@stint/core/driver";
import { eventually } from "@stint/core/testing";
import { expect } from "chai";
import { PostgresJobEvents } from "../../src";
import { createTestSchema, type TestSchema } from "../../src/testing";

const Logged = defineJob<{ n: number }>("logged");

describe("job events of a handler's log lines", () => {
  let test: TestSchema;
  let events: PostgresJobEvents;

  beforeEach(async () => {
    test = await createTestSchema();
    events = new PostgresJobEvents({ connectionString: test.connectionString, schema: test.schema, reconnectMinDelayMs: 20 });
  });
  afterEach(async () => {
    await events.close();
    await test.drop();
  });

  it("tells a subscriber of log events how many lines each write added, and nothing for a stale attempt's refused write", async () => {
    const seen: JobEvent[] = [];
    const subscription = await events.subscribe({ types: ["log"] }, { onEvent: (event) => void seen.push(event) });
    const { id } = await test.store.enqueue(buildNewJob(Logged, { n: 1 }));
    const [job] = await test.store.claimBatch({ queue: "logged", workerId: "w1", limit: 1, leaseMs: 60_000 });
    const line = (message: string) => JSON.stringify({ at: new Date().toISOString(), message });
    expect(await test.store.appendJobLog({ workerId: "w1", job: job!, linesJson: [line("a"), line("b")], droppedLines: 0 })).to.equal(true);
    expect(await test.store.appendJobLog({ workerId: "w2", job: job!, linesJson: [line("stale")], droppedLines: 0 })).to.equal(false);
    expect(await test.store.appendJobLog({ workerId: "w1", job: job!, linesJson: [line("c")], droppedLines: 0 })).to.equal(true);

    await eventually(() => (seen.length >= 2 ? true : undefined), { timeoutMs: 10_000, what: "two log events" });
    expect(
      seen.map((event) => ({
        type: event.type,
        jobId: event.jobId,
        queue: event.queue,
        attempt: event.attempt,
        lines: event.type === "log" ? event.lines : undefined,
      })),
    ).to.deep.equal([
      { type: "log", jobId: id, queue: "logged", attempt: 1, lines: 2 },
      { type: "log", jobId: id, queue: "logged", attempt: 1, lines: 1 },
    ]);
    await subscription.close();
  });
});
