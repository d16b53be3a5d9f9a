import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { createSilentLogger, ErrorCode, errorCodeOf } from "@stint/core";
import { InMemoryJobStore, runJob } from "@stint/core/testing";
import { SendWelcomeWorker } from "./send-welcome";

// One attempt through stint's own executor, against an in-memory store: no database needed.
describe("SendWelcomeWorker", () => {
  const worker = new SendWelcomeWorker(new InMemoryJobStore(), createSilentLogger());

  it("greets the user", async () => {
    const outcome = await runJob(worker, { userId: 42 });
    assert.equal(outcome.status, "succeeded");
    assert.deepEqual(outcome.status === "succeeded" && outcome.result, { greeting: "Welcome, user 42!" });
  });

  it("sends a payload its schema refuses to dead at once, naming the field", async () => {
    const outcome = await runJob(worker, { userId: -1 });
    assert.equal(outcome.status, "dead");
    assert.equal(outcome.status === "dead" && errorCodeOf(outcome.error), ErrorCode.Parse);
    assert.match(outcome.job.lastError ?? "", /invalid payload: payload\.userId: /);
  });
});
