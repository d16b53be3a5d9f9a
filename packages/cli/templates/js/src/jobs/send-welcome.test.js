const assert = require("node:assert/strict");
const { describe, it } = require("node:test");
const { createSilentLogger, ErrorCode, errorCodeOf } = require("@stint/core");
const { InMemoryJobStore, runJob } = require("@stint/core/testing");
const { SendWelcomeWorker } = require("./send-welcome");

// One attempt through stint's own executor, against an in-memory store: no database needed.
describe("SendWelcomeWorker", () => {
  const worker = new SendWelcomeWorker(new InMemoryJobStore(), createSilentLogger());

  it("greets the user", async () => {
    const outcome = await runJob(worker, { userId: 42 });
    assert.equal(outcome.status, "succeeded");
    assert.deepEqual(outcome.result, { greeting: "Welcome, user 42!" });
  });

  it("sends a payload its schema refuses to dead at once, naming the field", async () => {
    const outcome = await runJob(worker, { userId: -1 });
    assert.equal(outcome.status, "dead");
    assert.equal(errorCodeOf(outcome.error), ErrorCode.Parse);
    assert.match(outcome.job.lastError ?? "", /invalid payload: payload\.userId: /);
  });
});
