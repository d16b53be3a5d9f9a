import { expect } from "chai";
import { createSilentLogger } from "@stint/core";
import { createTestSchema, type TestSchema } from "@stint/postgres-driver/testing";
import { runDemo } from "../../src/demo/run-demo";

describe("the demo", () => {
  let test: TestSchema;

  beforeEach(async () => {
    test = await createTestSchema({ prefix: "stint_demo_test" });
  });
  afterEach(async () => {
    await test.drop();
  });

  it("runs to completion", async () => {
    let output = "";
    const result = await runDemo({
      connectionString: test.connectionString,
      schema: test.schema,
      write: (text) => {
        output += text;
      },
      logger: { logger: createSilentLogger() },
    });

    expect(result.problems).to.deep.equal([]);
    expect(result.exitCode).to.equal(0);
    expect(result.drained).to.equal(true);
    const queues = ["send-invoice-email", "send-report-email", "weekly-report", "nightly-cleanup", "ai-summary"];
    expect(result.rows.map((row) => row.queue)).to.have.members(queues);
    for (const row of result.rows) {
      expect(row.left, row.queue).to.equal(0);
      expect(row.succeeded + row.dead, row.queue).to.equal(row.jobs);
    }
    expect(result.rows.find((row) => row.queue === "send-invoice-email")).to.include({ jobs: 212, succeeded: 210, dead: 2 });
    expect(result.rows.find((row) => row.queue === "send-invoice-email")!.retried).to.be.at.least(20);

    const counts = await test.store.countByQueue();
    for (const { queue, counts: c } of counts) expect(c.queued + c.running + c.failed, queue).to.equal(0);

    expect(output).to.match(/^queue\s+jobs\s+succeeded\s+retried\s+dead\s+left\s+time$/m);
    for (const queue of [...queues, "total"]) expect(output).to.match(new RegExp(`^${queue}\\s+\\d+\\s+\\d+\\s+\\d+\\s+\\d+\\s+0\\s+\\d+\\.\\d\\d s$`, "m"));
    expect(output).to.contain("All checks passed.");
    expect(output).to.contain('invoiceId must be a positive integer, got "abc"');
  });
});
