import { expect } from "chai";
import fc from "fast-check";
import { startDashboardServer, TEST_TOKEN, type DashboardServer } from "../support/dashboard-server";
import { makeDeadJobs } from "../support/seed-jobs";

const AUTH = { authorization: `Bearer ${TEST_TOKEN}` };
/** What a Node stack trace line looks like. */
const STACK_LINE = /\n\s+at .+\(.+:\d+:\d+\)|node:internal|\.js:\d+:\d+/;

describe("bad input to the dashboard", () => {
  let server: DashboardServer;

  before(async () => {
    server = await startDashboardServer({ basePath: "/admin/jobs" });
    await makeDeadJobs(server.test.store, "send-invoice", 2, () => "Error: mailbox full");
  });
  after(async () => {
    await server?.close();
  });

  async function get(path: string): Promise<{ status: number; body: string }> {
    const response = await fetch(`${server.origin}${path}`, { headers: AUTH, redirect: "manual" });
    return { status: response.status, body: await response.text() };
  }

  const cases: [string, string, number][] = [
    ["an unknown job id", "/admin/jobs/jobs/987654321", 404],
    ["a job id that is not a number", "/admin/jobs/jobs/abc", 404],
    ["a job id past bigint", "/admin/jobs/jobs/99999999999999999999999", 404],
    ["an unknown state", "/admin/jobs/jobs?state=exploded", 400],
    ["a queue name with a control character", "/admin/jobs/jobs?queue=a%0Ab", 400],
    ["a cursor that is not an id", "/admin/jobs/jobs?before=-5", 400],
    ["a time that does not exist", "/admin/jobs/jobs?from=2024-02-30T10:00", 400],
    ["a time that is not a time", "/admin/jobs/jobs?to=yesterday", 400],
    ["a time zone offset out of range", "/admin/jobs/jobs?from=2024-02-03T10:00&tz=9999", 400],
    ["an error text over 200 characters", `/admin/jobs/jobs?q=${"x".repeat(201)}`, 400],
    ["an error text with a NUL character", "/admin/jobs/jobs?q=a%00b", 400],
    ["a filter given twice", "/admin/jobs/jobs?state=dead&state=queued", 400],
    ["an oversized query string", `/admin/jobs/jobs?q=${"x".repeat(5_000)}`, 414],
    ["a malformed percent escape in the path", "/admin/jobs/jobs/%E0%A4%A", 400],
    ["an unknown page", "/admin/jobs/nothing-here", 404],
    ["a path outside the base path", "/elsewhere", 404],
    ["a retry confirmation for a queue name over 512 characters", `/admin/jobs/queues/${"q".repeat(513)}/retry-dead`, 400],
    ["a cancel confirmation for a queue name with a control character", `/admin/jobs/queues/a%0Ab/cancel-waiting`, 400],
    ["a retry confirmation for a queue that does not exist", `/admin/jobs/queues/${"q".repeat(300)}/retry-dead`, 404],
    ["a cancel confirmation for a queue that does not exist", "/admin/jobs/queues/no%20such%20queue/cancel-waiting", 404],
    ["a cancel confirmation for running jobs", "/admin/jobs/queues/send-invoice/cancel-waiting?states=running", 400],
  ];
  for (const [name, path, status] of cases) {
    it(`answers ${name} with ${status} and a page without a stack trace`, async () => {
      const response = await get(path);
      expect(response.status).to.equal(status);
      expect(response.body)
        .to.contain("<!doctype html>")
        .and.match(/data-status="\d{3}"/);
      expect(response.body).to.not.match(STACK_LINE);
    });
  }

  it("answers a method it does not serve with 405", async () => {
    const response = await fetch(`${server.origin}/admin/jobs/`, { method: "DELETE", headers: AUTH });
    expect(response.status).to.equal(405);
  });

  it("refuses a form body over 8 KiB with 413", async () => {
    const response = await fetch(`${server.origin}/admin/jobs/queues/send-invoice/pause`, {
      method: "POST",
      headers: { ...AUTH, "content-type": "application/x-www-form-urlencoded" },
      body: `_csrf=${"x".repeat(9_000)}`,
    });
    expect(response.status).to.equal(413);
    expect(await server.test.store.listQueueControls()).to.deep.equal([]);
  });

  it("never answers any query string of the jobs page with a 5xx or a stack trace", async () => {
    const field = fc.constantFrom("queue", "state", "q", "from", "to", "tz", "before", "other");
    const value = fc.oneof(fc.string({ maxLength: 40 }), fc.constantFrom("dead", "send-invoice", "2024-01-01T00:00", "1", "-1", "%", "\u0000"));
    await fc.assert(
      fc.asyncProperty(fc.array(fc.tuple(field, value), { maxLength: 5 }), async (pairs) => {
        const query = new URLSearchParams(pairs).toString();
        const response = await get(`/admin/jobs/jobs?${query}`);
        expect(response.status, query).to.be.oneOf([200, 400, 414]);
        expect(response.body, query).to.not.match(STACK_LINE);
      }),
      { numRuns: 150 },
    );
  });
});
