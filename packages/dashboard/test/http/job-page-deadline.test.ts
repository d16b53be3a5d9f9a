import { defineJob, JobClient } from "@stint/core";
import { expect } from "chai";
import { startDashboardServer, TEST_TOKEN, type DashboardServer } from "../support/dashboard-server";

const AUTH = { authorization: `Bearer ${TEST_TOKEN}` };
const Push = defineJob<{ readonly userId: number }>("send-push");

describe("the job page's start-by deadline", () => {
  let server: DashboardServer;

  before(async () => {
    server = await startDashboardServer();
  });
  after(async () => {
    await server?.close();
  });

  async function startByField(id: string): Promise<string> {
    const response = await fetch(`${server.url}/jobs/${id}`, { headers: AUTH });
    const body = await response.text();
    expect(response.status, body.slice(0, 300)).to.equal(200);
    return /<dt>Start by<\/dt><dd>(.*?)<\/dd>/.exec(body)?.[1] ?? "no Start by field";
  }

  it("shows a job's deadline, an expired job's as expired, and none for a job without one", async () => {
    const { store } = server.test;
    const client = new JobClient(store);
    const waiting = await client.enqueue(Push, { userId: 1 }, { startBy: new Date("2031-01-01T00:00:00Z") });
    const expired = await client.enqueue(Push, { userId: 2 }, { startBy: new Date("2001-01-01T00:00:00Z") });
    const plain = await client.enqueue(Push, { userId: 3 });
    expect(await store.cancelExpiredJobs({ limit: 10 })).to.equal(1);
    expect(await startByField(waiting.id)).to.match(/^<time datetime="2031-01-01T00:00:00.000Z"[^>]*>.*<\/time>$/);
    expect(await startByField(expired.id)).to.match(/<time datetime="2001-01-01T00:00:00.000Z"[^>]*>.*<\/time> \(expired\)$/);
    expect(await startByField(plain.id)).to.equal("–");
  });
});
