import { expect } from "chai";
import { defineJob, JobClient, step, type ClaimedJob } from "@stint/core";
import { WORKFLOWS_SHOWN } from "../../src/data/workflow-data";
import { layoutWorkflow, workflowGraphSvg } from "../../src/pages/workflow-graph";
import { startDashboardServer, type DashboardServer } from "../support/dashboard-server";
import { AUTH_HEADER as AUTH, openFormSession } from "../support/form-session";

const Page = defineJob<{ n: number }>("wf-page", { maxAttempts: 1 });
const FAN_OUT = 1_000;

describe("the workflow pages: list, layered graph, links, cancel, through the real server", () => {
  let server: DashboardServer;
  let client: JobClient;
  let cookie: string;
  let token: string;

  before(async () => {
    server = await startDashboardServer();
    client = new JobClient(server.test.store);
    ({ cookie, token } = await openFormSession(server));
  });
  after(async () => {
    await server?.close();
  });

  /** A GET, or with `form` a POST of it (the CSRF token added unless given), as the browser sends them. */
  async function send(path: string, form?: Record<string, string>): Promise<{ status: number; location: string | null; body: string }> {
    const headers = { ...AUTH, cookie, "content-type": "application/x-www-form-urlencoded" };
    const init: RequestInit =
      form === undefined ? { headers } : { method: "POST", redirect: "manual", headers, body: new URLSearchParams({ _csrf: token, ...form }).toString() };
    const response = await fetch(`${server.url}${path}`, init);
    return { status: response.status, location: response.headers.get("location"), body: await response.text() };
  }
  const get = (path: string) => send(path);
  const post = (path: string) => send(path, {});

  const claim = (limit: number) => server.test.store.claimBatch({ queue: Page.name, workerId: "w", limit, leaseMs: 60_000 });
  const succeed = (jobs: readonly ClaimedJob[]) =>
    server.test.store.completeJobs({ workerId: "w", jobs: jobs.map((job) => ({ id: job.id, attempt: job.attempt, resultJson: "{}", durationMs: 3 })) });

  it("draws a 1,000-way fan-out as three boxes and two lines, quickly, each box linking to its step or its row", async () => {
    const workflow = await client.enqueueWorkflow("crawl", {
      split: step(Page, { n: 0 }),
      pages: Array.from({ length: FAN_OUT }, (_, n) => step(Page, { n }, { after: ["split"] })),
      merge: step(Page, { n: -1 }, { after: ["pages"] }),
    });
    await succeed(await claim(1));
    const pages = await claim(FAN_OUT);
    await succeed(pages.slice(10));
    const [dying] = pages;
    await server.test.store.markJobsDead({
      workerId: "w",
      jobs: [{ id: dying!.id, attempt: dying!.attempt, failure: { message: `Error: <img src=x onerror="alert(1)"> gone`, code: null } }],
    });

    const started = Date.now();
    const { status, body } = await get(`/workflows/${workflow.id}`);
    expect(status).to.equal(200);
    expect(Date.now() - started, "a 1,000-step page answers well within a second").to.be.below(2_000);
    expect(body).to.contain('<span class="state state-wf-running" data-workflow-state>running</span>');
    expect(body).to.match(/<a href="\/workflows"[^>]* aria-current="page">Workflows<\/a>/);
    const nodes = [...body.matchAll(/<a href="([^"]+)" class="wf-node state-(\w+)" data-node="([^"]+)" data-steps="(\d+)">/g)].map((match) => ({
      href: match[1]!,
      state: match[2]!,
      key: match[3]!,
      steps: Number(match[4]),
    }));
    expect(nodes.map((node) => [node.key, node.state, node.steps])).to.deep.equal([
      ["l0-0", "succeeded", 1],
      ["l1-0", "dead", FAN_OUT],
      ["l2-0", "cancelled", 1],
    ]);
    expect(nodes[0]!.href).to.equal(`/jobs/${workflow.steps.split.id}`);
    expect(nodes[1]!.href).to.equal("#steps-l1-0");
    expect(body).to.contain('<tr id="steps-l1-0" data-step-row="l1-0">');
    expect(body).to.contain(`pages ×1,000`).and.contain("990 succeeded · 9 running …");
    expect([...body.matchAll(/<line [^>]*data-edge="([^"]+)"/g)].map((match) => match[1])).to.deep.equal(["l0-0 l1-0", "l1-0 l2-0"]);
    expect(body, "the error is escaped").to.contain("Error: &lt;img src=x onerror=&quot;alert(1)&quot;&gt; gone").and.not.contain("<img src=x");
    expect(body, "the merge waits for the whole list").to.contain("pages ×1,000</td>");
    expect(body).to.contain(`action="/workflows/${workflow.id}/cancel"`);

    const stepPage = await get(nodes[0]!.href);
    expect(stepPage.body).to.contain(`<a href="/workflows/${workflow.id}" data-workflow>Workflow ${workflow.id}</a>, step <code>split</code>`);
  });

  it("lays out layers by the longest path, ordering a layer by its parents", () => {
    const at = (jobId: string, name: string, after: string[]) => ({
      jobId,
      step: name,
      queue: "q",
      state: "blocked" as const,
      after,
      ignoreFailedDependencies: false,
      attempts: 0,
      createdAt: new Date(0),
      startedAt: null,
      finishedAt: null,
      durationMs: null,
      lastError: null,
      errorCode: null,
    });
    // d waits for a and c; c for b; b for a: d is on layer 3, not 1. Steps added later (ids 5, 6) may be waited for by earlier ones.
    const graph = layoutWorkflow([at("1", "a", []), at("2", "b", ["1"]), at("3", "c", ["2"]), at("4", "d", ["1", "3", "6"]), at("6", "e", ["1"])]);
    expect(graph.nodes.map((node) => [node.name, node.layer])).to.deep.equal([
      ["a", 0],
      ["b", 1],
      ["e", 1],
      ["c", 2],
      ["d", 3],
    ]);
    expect(graph.edges).to.have.length(6);
    const markup = layoutWorkflow([at("1", `<script>alert("x")</script>`, [])]);
    const svg = workflowGraphSvg({ prefix: "/admin" }, markup, `Steps of "<b>"`).toString();
    expect(svg, "a name written past the checks is text in the SVG too").to.contain("&lt;script&gt;alert(&quot;x&quot;)&lt;/scr…").and.not.contain("<script>");
    expect(svg).to.contain('aria-label="Steps of &quot;&lt;b&gt;&quot;"').and.contain('href="/admin/jobs/1"');
    const many = layoutWorkflow(Array.from({ length: 100 }, (_, n) => at(String(n + 1), `step-${n}`, [])));
    expect(many.nodes, "a crowded layer keeps 40 boxes, the last holding the rest").to.have.length(40);
    expect(many.nodes[39]!.steps).to.have.length(61);
    expect(many.nodes[39]!.name).to.equal(null);
  });

  it("lists workflows by state with links, refuses a bad filter, and answers 404 for an unknown workflow", async () => {
    const done = await client.enqueueWorkflow("tiny", { only: step(Page, { n: 7 }) });
    const list = await get("/workflows");
    expect(list.status).to.equal(200);
    expect(list.body).to.match(new RegExp(`<tr data-workflow-id="${done.id}" data-state="running">`));
    expect(list.body).to.contain(`<a href="/workflows/${done.id}">${done.id}</a>`);
    const running = await get("/workflows?state=running&name=tiny");
    expect(running.body).to.contain(`data-workflow-id="${done.id}"`).and.not.contain('data-state="failed"');
    expect((await get("/workflows?state=sideways")).status).to.equal(400);
    expect((await get("/workflows?name=%3Cscript%3E")).status).to.equal(400);
    expect((await get("/workflows/99999999")).status).to.equal(404);
    expect((await get("/workflows/not-an-id")).status).to.equal(404);
    const blocked = await get("/jobs?state=blocked");
    expect(blocked.status).to.equal(200);
  });

  it("pages through workflows: an older page after the newest 100, and back to the newest", async () => {
    const ids: string[] = [];
    for (let n = 0; n < WORKFLOWS_SHOWN + 1; n += 1) ids.push((await client.enqueueWorkflow("paged", { only: step(Page, { n }) })).id);
    const newest = await get("/workflows?name=paged");
    expect(newest.body.match(/data-workflow-id=/g)).to.have.length(WORKFLOWS_SHOWN);
    expect(newest.body).to.not.contain(`data-workflow-id="${ids[0]}"`).and.not.contain('data-page="newest"');
    expect(newest.body).to.contain(`<a rel="next" href="/workflows?name=paged&amp;before=${ids[1]}" data-page="older">Older →</a>`);
    const older = await get(`/workflows?name=paged&before=${ids[1]}`);
    expect(older.body.match(/data-workflow-id="(\d+)"/g)).to.deep.equal([`data-workflow-id="${ids[0]}"`]);
    expect(older.body).to.contain('href="/workflows?name=paged" data-page="newest"').and.not.contain('data-page="older"');
    expect((await get("/workflows?before=x")).status).to.equal(400);
  });

  it("cancels a running workflow with the CSRF token, then refuses to cancel it again", async () => {
    const workflow = await client.enqueueWorkflow("to-cancel", { a: step(Page, { n: 1 }), b: step(Page, { n: 2 }, { after: ["a"] }) });
    const refused = await send(`/workflows/${workflow.id}/cancel`, { _csrf: "wrong" });
    expect(refused.status).to.equal(403);
    const done = await post(`/workflows/${workflow.id}/cancel`);
    expect(done.status).to.equal(303);
    expect(done.location).to.equal(`/workflows/${workflow.id}?done=cancelled-workflow&n=2`);
    const page = await get(done.location!);
    expect(page.body).to.contain("The workflow is cancelled: 2 steps cancelled.").and.contain("state-wf-cancelled");
    expect(page.body, "no cancel button once it ended").to.not.contain(`/workflows/${workflow.id}/cancel`);
    expect((await post(`/workflows/${workflow.id}/cancel`)).status).to.equal(409);
    expect(server.log.some((line) => line.fields?.["action"] === "cancel-workflow" && line.fields["workflowId"] === workflow.id)).to.equal(true);
  });
});
