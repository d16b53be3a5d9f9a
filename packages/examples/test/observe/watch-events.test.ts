import { expect } from "chai";
import { createSilentLogger, PermanentError, type JobDeadEvent } from "@stint/core";
import { watchEvents } from "../../src/observe/watch-events";

describe("watchEvents", () => {
  it("pages once per dead job with its queue, id, attempts and error", async () => {
    const sent: string[] = [];
    const events = watchEvents({ notify: async (text) => void sent.push(text) }, createSilentLogger());
    const dead: JobDeadEvent = {
      jobId: "812",
      queue: "send-invoice-email",
      attempt: 3,
      maxAttempts: 3,
      workerId: "w1",
      at: new Date(),
      runAt: new Date(),
      payload: {},
      error: new PermanentError("the mailbox does not exist"),
      errorCode: "STINT_PERMANENT",
      durationMs: 12,
    };
    events.emit("job.dead", dead);
    expect(sent).to.deep.equal(["send-invoice-email job 812 is dead after 3 attempts: the mailbox does not exist"]);
  });
});
