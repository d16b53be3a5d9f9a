import { expect } from "chai";
import { sql } from "kysely";
import { startDashboardServer, TEST_TOKEN, type DashboardServer } from "../support/dashboard-server";
import { seedOddQueue } from "../support/seed-odd-queue";
import { openFormSession } from "../support/form-session";

const AUTH = { authorization: `Bearer ${TEST_TOKEN}` };
const SPACED = "billing / eu west";
const MARKUP = "<b>Ünïcödé</b> & 'quotes' \"too\"";
const LONGEST = `Long ${"x".repeat(118)} name`;

describe("actions on queues whose names break the naming rule, through the real server", () => {
  let server: DashboardServer;
  let cookie: string;
  let token: string;

  before(async () => {
    server = await startDashboardServer();
    for (const queue of [SPACED, MARKUP, LONGEST]) await seedOddQueue(server.test.db, server.test.schema, server.test.store, queue);
    ({ cookie, token } = await openFormSession(server));
  });
  after(async () => {
    await server?.close();
  });

  async function get(path: string): Promise<{ status: number; body: string }> {
    const response = await fetch(`${server.url}${path}`, { headers: { ...AUTH, cookie } });
    return { status: response.status, body: await response.text() };
  }

  async function post(path: string, fields: Record<string, string> = {}): Promise<{ status: number; location: string | null; body: string }> {
    const response = await fetch(`${server.url}${path}`, {
      method: "POST",
      redirect: "manual",
      headers: { ...AUTH, cookie, "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ _csrf: token, ...fields }).toString(),
    });
    return { status: response.status, location: response.headers.get("location"), body: await response.text() };
  }

  /** Every `href` and `action` of a page, entities decoded. */
  function targets(body: string): string[] {
    const decode = (text: string) =>
      text.replace(/&(amp|lt|gt|quot|#39);/g, (_, name: string) => ({ amp: "&", lt: "<", gt: ">", quot: '"', "#39": "'" })[name]!);
    return [...body.matchAll(/ (?:href|action)="([^"]*)"/g)].map((match) => decode(match[1]!));
  }

  async function controls(queue: string) {
    return (await server.test.store.listQueueControls()).find((entry) => entry.queue === queue);
  }

  it("links every queue from the overview by its encoded name, and shows the name escaped", async () => {
    const { status, body } = await get("/");
    expect(status).to.equal(200);
    for (const queue of [SPACED, MARKUP, LONGEST]) {
      expect(targets(body)).to.include.members([`/jobs?${new URLSearchParams({ queue })}`, `/queues/${encodeURIComponent(queue)}/retry-dead`]);
    }
    expect(body).to.not.contain("<b>Ünïcödé</b>");
    expect(body).to.contain("&lt;b&gt;Ünïcödé&lt;/b&gt; &amp; &#39;quotes&#39;");
  });

  it("answers every link of such a queue with 200", async () => {
    for (const queue of [SPACED, MARKUP, LONGEST]) {
      const encoded = encodeURIComponent(queue);
      const list = await get(`/jobs?${new URLSearchParams({ queue })}`);
      expect(list.status, queue).to.equal(200);
      expect(list.body.match(/<tr data-job-id="/g) ?? [], queue).to.have.lengthOf(3);
      expect((await get(`/jobs?${new URLSearchParams({ queue, state: "dead" })}`)).body.match(/<tr data-job-id="/g) ?? []).to.have.lengthOf(1);
      const retry = await get(`/queues/${encoded}/retry-dead`);
      expect(retry.status, queue).to.equal(200);
      expect(targets(retry.body)).to.include(`/queues/${encoded}/retry-dead`);
      expect((await get(`/queues/${encoded}/cancel-waiting?states=queued`)).status, queue).to.equal(200);
    }
  });

  it("pauses and resumes such a queue, and logs it", async () => {
    const path = `/queues/${encodeURIComponent(SPACED)}`;
    const paused = await post(`${path}/pause`);
    expect(paused.status, paused.body).to.equal(303);
    expect(paused.location).to.equal(`/?${new URLSearchParams({ done: "paused", queue: SPACED })}`);
    expect((await controls(SPACED))?.paused).to.equal(true);
    expect((await get("/")).body).to.contain(`<tr data-queue="${SPACED}" class="paused">`);
    expect((await post(`${path}/resume`)).status).to.equal(303);
    expect((await controls(SPACED))?.paused).to.equal(false);
    expect(server.log.filter((line) => line.fields?.["queue"] === SPACED).map((line) => line.fields?.["action"])).to.deep.equal(["pause", "resume"]);
  });

  it("retries the dead jobs and cancels the waiting ones of such a queue", async () => {
    const path = `/queues/${encodeURIComponent(MARKUP)}`;
    const retried = await post(`${path}/retry-dead`, { expected: "1" });
    expect(retried.status, retried.body).to.equal(303);
    expect(retried.location).to.contain("n=1");
    const cancelled = await post(`${path}/cancel-waiting`, { expected: "3", states: "queued" });
    expect(cancelled.status, cancelled.body).to.equal(303);
    expect(cancelled.location).to.contain("n=3");
    const { rows } = await sql<{ state: string }>`SELECT state FROM ${sql.id(server.test.schema, "finished_jobs")} WHERE queue = ${MARKUP}`.execute(
      server.test.db,
    );
    expect(rows.map((row) => row.state)).to.deep.equal(["cancelled", "cancelled", "cancelled"]);
  });

  it("answers an action on a queue that does not exist with a readable 404, and writes nothing", async () => {
    for (const action of ["pause", "resume"]) {
      const response = await post(`/queues/${encodeURIComponent("no such / queue")}/${action}`);
      expect(response.status).to.equal(404);
      expect(response.body).to.contain("There is no queue named &quot;no such / queue&quot;");
    }
    expect((await post("/queues/nothing-here/retry-dead", { expected: "1" })).status).to.equal(404);
    expect((await post("/queues/nothing-here/cancel-waiting", { expected: "1" })).status).to.equal(404);
    expect(await controls("no such / queue")).to.equal(undefined);
    expect(await controls("nothing-here")).to.equal(undefined);
  });

  it("answers a pause of such a queue without a queues row with a readable 409, and makes no row", async () => {
    await sql`INSERT INTO ${sql.id(server.test.schema, "jobs")} (queue, payload) VALUES ('No Row Queue', '{}')`.execute(server.test.db);
    const response = await post(`/queues/No%20Row%20Queue/pause`);
    expect(response.status).to.equal(409);
    expect(response.body).to.contain("breaks the naming rule and has no row in the queues table");
    expect(await controls("No Row Queue")).to.equal(undefined);
  });

  it("refuses a queue name with a control character or over 512 characters with a 400 naming the parameter", async () => {
    for (const name of ["a%0Ab", "a%7Fb", "q".repeat(513)]) {
      const response = await post(`/queues/${name}/pause`);
      expect(response.status, name).to.equal(400);
      expect(response.body).to.contain("The parameter &quot;queue&quot; must be a queue name of 1 to 512 characters without control characters.");
    }
  });
});
