import { expect } from "chai";
import { createTestSchema, type TestSchema } from "../../src/testing";
import { newJob } from "@stint/core/testing";

describe("enqueueMany of a batch without dedupe keys", () => {
  let test: TestSchema;

  before(async () => {
    test = await createTestSchema();
  });
  after(async () => {
    await test.drop();
  });

  it("stores every job's own queue, payload, priority, attempts, timeout, run time and meta, and answers in input order", async () => {
    const runAt = new Date("2031-05-06T07:08:09.000Z");
    const jobs = [
      newJob("plain-a", { n: 0, text: 'it\'s "quoted" \u00e9' }, { priority: 5, maxAttempts: 2, timeoutMs: 1_500, metaJson: '{"tenant":"acme"}' }),
      newJob("plain-b", [1, { deep: [null, true] }], { runAt, delayMs: 1_000 }),
      newJob("plain-a", "a string payload", { priority: -3, delayMs: 60_000 }),
      newJob("plain-b", null),
    ];
    const results = await test.store.enqueueMany(jobs);
    expect(results.map((result) => result.duplicate)).to.deep.equal([false, false, false, false]);
    const stored = await Promise.all(results.map((result) => test.store.getJob({ id: result.id })));
    expect(stored.map((job) => [job!.queue, job!.payload, job!.priority, job!.maxAttempts, job!.timeoutMs, job!.meta])).to.deep.equal([
      ["plain-a", { n: 0, text: 'it\'s "quoted" \u00e9' }, 5, 2, 1_500, { tenant: "acme" }],
      ["plain-b", [1, { deep: [null, true] }], 0, 3, null, {}],
      ["plain-a", "a string payload", -3, 3, null, {}],
      ["plain-b", null, 0, 3, null, {}],
    ]);
    expect(stored[1]!.runAt.toISOString()).to.equal("2031-05-06T07:08:10.000Z");
    expect(stored[2]!.runAt.getTime() - stored[0]!.runAt.getTime()).to.be.within(59_000, 61_000);
    const ids = results.map((result) => BigInt(result.id));
    expect(ids, "ids drawn in input order").to.deep.equal([...ids].sort((a, b) => (a < b ? -1 : 1)));
  });
});
