import { expect } from "chai";
import { defineJob } from "@stint/core";
import { buildNewJob } from "@stint/core/driver";
import { startDashboardServer, TEST_TOKEN, type DashboardServer } from "../support/dashboard-server";

const AUTH = { authorization: `Bearer ${TEST_TOKEN}` };
const Refund = defineJob<{ refundId: number }>("refund", { deadLetterQueue: "refund-dead" });

describe("the job page links a dead job to its dead-letter copy and back, through the real server", () => {
  let server: DashboardServer;
  let dead: string;
  let copy: string;

  before(async () => {
    server = await startDashboardServer();
    const { store } = server.test;
    ({ id: dead } = await store.enqueue(buildNewJob(Refund, { refundId: 4 })));
    const [job] = await store.claimBatch({ queue: "refund", workerId: "w", limit: 1, leaseMs: 60_000 });
    await store.markJobsDead({
      workerId: "w",
      jobs: [{ id: dead, attempt: job!.attempt, failure: { message: "PermanentError: card 4 <closed>", code: "STINT_PERMANENT" } }],
    });
    copy = (await store.listJobs({ queue: "refund-dead", limit: 1 }))[0]!.id;
  });
  after(async () => {
    await server?.close();
  });

  async function page(id: string): Promise<string> {
    const response = await fetch(`${server.url}/jobs/${id}`, { headers: AUTH });
    expect(response.status).to.equal(200);
    return response.text();
  }

  it("shows the dead job's dead-letter queue and a link to its copy", async () => {
    const body = await page(dead);
    expect(body).to.contain("<h2>Dead letter</h2>");
    expect(body).to.match(/<dt>Dead-letter queue<\/dt><dd><a href="[^"]*\/jobs\?queue=refund-dead">refund-dead<\/a><\/dd>/);
    expect(body).to.match(new RegExp(`<a href="[^"]*/jobs/${copy}" data-dead-letter-copy>Job ${copy}</a>`));
  });

  it("shows on the copy a link back to the dead job, with its error escaped", async () => {
    const body = await page(copy);
    expect(body).to.match(new RegExp(`<a href="[^"]*/jobs/${dead}" data-dead-letter-of>Job ${dead}</a> of refund, dead after 1 attempt`));
    expect(body).to.contain("<code>STINT_PERMANENT</code>): PermanentError: card 4 &lt;closed&gt;");
    expect(body).not.to.contain("data-dead-letter-copy");
  });

  it("has no dead-letter section for a job without one", async () => {
    const { id } = await server.test.store.enqueue(buildNewJob(defineJob<object>("plain"), {}));
    expect(await page(id)).not.to.contain("Dead letter");
  });
});
