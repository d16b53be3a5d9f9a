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
    expect(result.refusedAtEnqueue).to.equal(5);
    expect(result.drained).to.equal(true);
    const queues = [
      "send-invoice-email",
      "send-report-email",
      "weekly-report",
      "nightly-cleanup",
      "ai-summary",
      "month-end-customers",
      "month-end-invoice",
      "month-end-report",
    ];
    expect(result.rows.map((row) => row.queue)).to.have.members(queues);
    for (const row of result.rows) {
      expect(row.left, row.queue).to.equal(0);
      expect(row.succeeded + row.dead, row.queue).to.equal(row.jobs);
    }
    expect(result.rows.find((row) => row.queue === "send-invoice-email")).to.include({ jobs: 212, succeeded: 210, dead: 2 });
    expect(result.rows.find((row) => row.queue === "send-invoice-email")!.retried).to.be.at.least(20);
    expect(result.rows.find((row) => row.queue === "month-end-customers")).to.include({ jobs: 1, succeeded: 1 });
    expect(result.rows.find((row) => row.queue === "month-end-invoice")).to.include({ jobs: 5, succeeded: 5 });
    expect(result.rows.find((row) => row.queue === "month-end-report")).to.include({ jobs: 1, succeeded: 1 });

    const counts = await test.store.countByQueue();
    for (const { queue, counts: c } of counts) expect(c.queued + c.running + c.failed, queue).to.equal(0);

    expect(output).to.match(/^queue\s+jobs\s+succeeded\s+retried\s+dead\s+left\s+time$/m);
    for (const queue of [...queues, "total"]) expect(output).to.match(new RegExp(`^${queue}\\s+\\d+\\s+\\d+\\s+\\d+\\s+\\d+\\s+0\\s+\\d+\\.\\d\\d s$`, "m"));
    expect(output).to.contain("All checks passed.");
    expect(output).to.match(/^Month-end: workflow \d+ succeeded, 5 invoices \(.+\), report #\d+\.$/m);
    expect(output).to.contain("Refused 5 malformed payloads at enqueue, inserting nothing:");
    const reason = "payload.invoiceId: Invalid input: expected number, received string";
    expect(output, "the refusal at enqueue").to.contain(`  payload of queue "send-invoice-email" failed its schema: ${reason}\n`);
    expect(output, "the dead job written with SQL").to.match(new RegExp(`^  #\\d+ send-invoice-email: invalid payload: ${reason}$`, "m"));
  });
});
